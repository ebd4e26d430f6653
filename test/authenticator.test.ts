import assert from 'node:assert/strict';
import { Authenticator } from '../src/domain/authenticator';
import { revokeKey, setPlan } from '../src/domain/administration';
import { ApiError } from '../src/errors';
import { sharedDatabase } from './support/database';
import { eventually } from './support/eventually';
import { createTenant } from './support/fixtures';

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    assert.ok(err instanceof ApiError);
    return err.code;
  }
}

describe('Authenticator cache', () => {
  it('applies a revocation once the cached lookup is older than the TTL, not before', async () => {
    const { db } = await sharedDatabase();
    const tenant = await createTenant(db);
    let now = Date.now();
    const auth = new Authenticator(db, 30, () => now);
    assert.equal((await auth.authenticate(`Bearer ${tenant.key}`)).appId, tenant.appId);

    await revokeKey(db, tenant.keyId);
    now += 29_000;
    assert.equal((await auth.authenticate(`Bearer ${tenant.key}`)).appId, tenant.appId, 'still cached within the TTL');
    now += 1_000;
    assert.equal(await codeOf(auth.authenticate(`Bearer ${tenant.key}`)), 'key_revoked');
  });

  it('checks the plan on every lookup with a zero TTL', async () => {
    const { db } = await sharedDatabase();
    const tenant = await createTenant(db);
    const auth = new Authenticator(db, 0);
    await auth.authenticate(`Bearer ${tenant.key}`);
    await setPlan(db, tenant.orgId, { apiEnabled: false });
    assert.equal(await codeOf(auth.authenticate(`Bearer ${tenant.key}`)), 'plan_disabled');
  });

  it('records the last use of a key', async () => {
    const { db } = await sharedDatabase();
    const tenant = await createTenant(db);
    await new Authenticator(db, 0).authenticate(`Bearer ${tenant.key}`);
    // Written off the request's path: it lands shortly after.
    const row = await eventually(
      () =>
        db.kysely
          .selectFrom('api_keys')
          .select(['last_used_at', 'key_hash', 'display_prefix'])
          .where('id', '=', tenant.keyId)
          .executeTakeFirstOrThrow(),
      (r) => r.last_used_at !== null,
    );
    assert.ok(row.last_used_at);
    assert.notEqual(row.key_hash, tenant.key, 'only a hash is stored');
    assert.ok(tenant.key.startsWith(row.display_prefix));
    assert.ok(row.display_prefix.length < 20);
  });
});

import assert from 'node:assert/strict';
import { revokeKey, issueKey, setPlan } from '../src/domain/administration';
import { client } from './support/client';
import { issueExpiredKey, setup } from './support/fixtures';

describe('GET /api/v1/ingest/ping', () => {
  it('echoes the organization and app of the key, with X-Request-Id and X-API-Version', async () => {
    const { app, tenant } = await setup();
    const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      ok: true,
      organizationId: tenant.orgId,
      app: { id: tenant.appId, slug: tenant.slug, name: res.body.app.name },
    });
    assert.match(res.headers['x-request-id'], /^req_/);
    assert.equal(res.headers['x-api-version'], '2026-11-21');
  });

  const refusals: Array<[string, (key: string) => string | undefined, string]> = [
    ['no Authorization header', () => undefined, 'missing_authorization'],
    ['a scheme other than Bearer', (key) => `Basic ${key}`, 'missing_authorization'],
    ['an empty bearer', () => 'Bearer ', 'missing_authorization'],
    ['a key with the wrong prefix', (key) => `Bearer ${key.replace('svc_live_', 'svc_test_')}`, 'invalid_key'],
    ['a key one character short', (key) => `Bearer ${key.slice(0, -1)}`, 'invalid_key'],
    ['a well-formed key that was never issued', () => `Bearer svc_live_${'A'.repeat(43)}`, 'invalid_key'],
  ];
  for (const [what, header, code] of refusals) {
    it(`answers 401 ${code} for ${what}`, async () => {
      const { app, tenant } = await setup();
      const value = header(tenant.key);
      const res = await client(app).get('/api/v1/ingest/ping', value === undefined ? {} : { headers: { Authorization: value } });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, code);
      assert.equal(res.body.error.requestId, res.headers['x-request-id']);
      assert.match(res.body.error.docsUrl, new RegExp(`/docs#section/Errors/${code}$`));
    });
  }

  it('answers 401 key_revoked once the key is revoked', async () => {
    const { app, db, tenant } = await setup();
    await revokeKey(db, tenant.keyId);
    const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'key_revoked');
  });

  it('answers 401 key_expired past expiresAt, and 200 before it', async () => {
    const { app, db, tenant } = await setup();
    const expired = await issueExpiredKey(db, tenant.appId);
    const valid = await issueKey(db, tenant.appId, new Date(Date.now() + 3_600_000).toISOString());
    const api = client(app);
    assert.equal((await api.get('/api/v1/ingest/ping', { key: expired.key })).body.error.code, 'key_expired');
    assert.equal((await api.get('/api/v1/ingest/ping', { key: valid.key })).status, 200);
  });

  it('answers 402 plan_disabled when the plan does not include the developer API', async () => {
    const { app, db, tenant } = await setup();
    await setPlan(db, tenant.orgId, { apiEnabled: false });
    const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key });
    assert.equal(res.status, 402);
    assert.equal(res.body.error.code, 'plan_disabled');
  });

  it('keeps every key scoped to its own app', async () => {
    const first = await setup();
    const second = await setup();
    const res = await client(first.app).get('/api/v1/ingest/ping', { key: second.tenant.key });
    assert.equal(res.body.app.id, second.tenant.appId);
    assert.equal(res.body.organizationId, second.tenant.orgId);
  });
});

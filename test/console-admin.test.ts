import assert from 'node:assert/strict';
import type { Express } from 'express';
import type { Db } from '../src/data/db';
import { hashApiKey } from '../src/domain/api-keys';
import { client } from './support/client';
import { signIn } from './support/console';
import { eventually } from './support/eventually';
import { event } from './support/events';
import { createTenant, setup, type Tenant } from './support/fixtures';

const C = '/api/v1/console';
const PING = '/api/v1/ingest/ping';

type Session = Awaited<ReturnType<typeof signIn>>;

/** An organization (with its app and key from createTenant) and an owner signed in to it. */
async function organization(app: Express, db: Db, role: 'owner' | 'admin' | 'member' = 'owner') {
  const tenant = await createTenant(db);
  const session = await signIn(app, db, { role, orgId: tenant.orgId });
  return { tenant, session };
}

/** Every administration operation with real ids of `t`, and a valid body where it takes one. */
function adminCalls(t: { appId: string; keyId: string; memberId: string }) {
  return [
    ['get', `${C}/apps`],
    ['post', `${C}/apps`, { slug: 'newapp', name: 'New' }],
    ['get', `${C}/apps/${t.appId}`],
    ['put', `${C}/apps/${t.appId}/allowed-event-types`, { allowedEventTypes: ['x.type'] }],
    ['get', `${C}/apps/${t.appId}/keys`],
    ['post', `${C}/apps/${t.appId}/keys`, {}],
    ['post', `${C}/apps/${t.appId}/keys/${t.keyId}/revoke`],
    ['get', `${C}/apps/${t.appId}/statistics`],
    ['put', `${C}/apps/${t.appId}/statistics`, { statistics: [] }],
    ['get', `${C}/members`],
    ['post', `${C}/members`, { email: 'invited@example.com', role: 'member' }],
    ['patch', `${C}/members/${t.memberId}`, { role: 'admin' }],
    ['delete', `${C}/members/${t.memberId}`],
    ['get', `${C}/organization`],
    ['patch', `${C}/organization`, { name: 'Renamed' }],
    ['get', `${C}/audit-log`],
  ] as const;
}

// Signing in hashes a password (scrypt) for each session: slow on a busy machine.
describe('Console administration', function () {
  this.timeout(60_000);

  it('answers a plain member 403 insufficient_role on every administration endpoint, and changes nothing', async () => {
    const { app, db, services } = await setup();
    const { tenant, session } = await organization(app, db, 'member');
    const calls = adminCalls({ appId: tenant.appId, keyId: tenant.keyId, memberId: session.memberId });
    const declared = Object.values<Record<string, { 'x-roles'?: unknown }>>(services.contract.paths)
      .flatMap((item) => Object.values(item))
      .filter((op) => op['x-roles'] !== undefined);
    assert.equal(calls.length, declared.length, 'every operation with x-roles is tried');
    for (const [method, path, body] of calls) {
      const res = await session.console[method](path, { body });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'insufficient_role');
    }
    assert.equal((await client(app).get(PING, { key: tenant.key })).status, 200, 'the key still works');
  });

  it('creates, lists and reads apps; enforces the slug rule and answers a taken slug 409 slug_taken', async () => {
    const { app, db } = await setup();
    const { tenant, session } = await organization(app, db, 'admin');
    const created = await session.console.post(`${C}/apps`, { body: { slug: 'tickets', name: 'Tickets' } });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(
      { ...created.body, id: undefined, createdAt: undefined },
      { id: undefined, slug: 'tickets', name: 'Tickets', integrationId: 'custom:tickets', allowedEventTypes: [], createdAt: undefined },
    );
    const creator = await db.kysely.selectFrom('apps').select('created_by').where('id', '=', created.body.id).executeTakeFirstOrThrow();
    assert.equal(creator.created_by, session.memberId, "the session's member is the creator");
    assert.deepEqual((await session.console.get(`${C}/apps/${created.body.id}`)).body, created.body);
    const list = await session.console.get(`${C}/apps`);
    assert.deepEqual(list.body.items.map((a: { id: string }) => a.id).sort(), [tenant.appId, created.body.id].sort());

    const taken = await session.console.post(`${C}/apps`, { body: { slug: 'tickets', name: 'Again' } });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.error.code, 'slug_taken');
    for (const slug of ['a', `a${'b'.repeat(40)}`, '1abc', 'Abc', 'a_b']) {
      const res = await session.console.post(`${C}/apps`, { body: { slug, name: 'N' } });
      assert.equal(res.status, 400, slug);
      assert.equal(res.body.error.code, 'invalid_body');
    }
    assert.equal((await session.console.post(`${C}/apps`, { body: { slug: `a${'b'.repeat(39)}`, name: 'N' } })).status, 201);
  });

  it('replaces the whitelist: each an event type name, at most 200; the key then sends what it allows', async () => {
    const { app, db } = await setup();
    const { tenant, session } = await organization(app, db);
    const path = `${C}/apps/${tenant.appId}/allowed-event-types`;
    const res = await session.console.put(path, { body: { allowedEventTypes: ['deploy.finished', 'deploy.finished'] } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.allowedEventTypes, ['deploy.finished']);
    const api = client(app);
    const sent = await api.post('/api/v1/ingest/events', {
      key: tenant.key,
      body: { events: [event({ eventType: 'deploy.finished', category: 'CODE_CHANGE' }), event()] },
    });
    assert.equal(sent.status, 207, sent.text);
    assert.equal(sent.body.results.rejected[0].code, 'forbidden_event_type');
    for (const allowedEventTypes of [['no'], ['a b c'], Array.from({ length: 201 }, (_, i) => `type.${i}`)]) {
      const refused = await session.console.put(path, { body: { allowedEventTypes } });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error.code, 'invalid_body');
    }
    const full = Array.from({ length: 200 }, (_, i) => `type.${i}`);
    assert.equal((await session.console.put(path, { body: { allowedEventTypes: full } })).body.allowedEventTypes.length, 200);
  });

  it('issues a key shown once that works at once, lists keys without the secret, and a revoked key stops at once here', async () => {
    const { app, db } = await setup({ AUTH_CACHE_TTL_SECONDS: '60' });
    const { tenant, session } = await organization(app, db);
    const keys = `${C}/apps/${tenant.appId}/keys`;
    const issued = await session.console.post(keys, { body: { expiresAt: '2099-01-01T00:00:00+01:00' } });
    assert.equal(issued.status, 201, issued.text);
    assert.match(issued.body.key, /^svc_live_[A-Za-z0-9_-]{43}$/);
    assert.equal(issued.body.prefix, issued.body.key.slice(0, 15));
    assert.equal(issued.body.expiresAt, '2098-12-31T23:00:00.000Z');
    const api = client(app);
    const ping = await api.get(PING, { key: issued.body.key });
    assert.equal(ping.status, 200, 'works at once');
    assert.equal(ping.body.app.id, tenant.appId);

    const listed = await eventually(
      () => session.console.get(keys),
      (res) => res.body.items.some((k: { id: string; lastUsedAt: string | null }) => k.id === issued.body.id && k.lastUsedAt !== null),
    );
    assert.deepEqual(
      listed.body.items.map((k: { id: string }) => k.id),
      [issued.body.id, tenant.keyId],
    );
    const mine = listed.body.items[0];
    assert.ok(Date.parse(mine.lastUsedAt) >= Date.parse(mine.createdAt), 'lastUsedAt after the ping');
    for (const secret of [issued.body.key.slice(15), hashApiKey(issued.body.key), tenant.key.slice(15), hashApiKey(tenant.key)]) {
      assert.ok(!listed.text.includes(secret), 'never the key or its hash');
    }

    const revoked = await session.console.post(`${keys}/${issued.body.id}/revoke`);
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(revoked.body.id, issued.body.id);
    // The lookup is cached for 60 s, but this instance forgot it on revocation.
    const after = await api.get(PING, { key: issued.body.key });
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'key_revoked');
    const again = await session.console.post(`${keys}/${issued.body.id}/revoke`);
    assert.equal(again.body.revokedAt, revoked.body.revokedAt);
    assert.equal((await session.console.get(keys)).body.items[0].revokedAt, revoked.body.revokedAt);
  });

  it('refuses an expiry in the past, and an expired key stops working', async () => {
    const { app, db } = await setup();
    const { tenant, session } = await organization(app, db);
    const keys = `${C}/apps/${tenant.appId}/keys`;
    for (const expiresAt of ['2020-01-01T00:00:00Z', new Date(Date.now() - 1000).toISOString(), '2099-01-01']) {
      const res = await session.console.post(keys, { body: { expiresAt } });
      assert.equal(res.status, 400, expiresAt);
      assert.equal(res.body.error.code, 'invalid_body');
    }
    const soon = await session.console.post(keys, { body: { expiresAt: new Date(Date.now() + 1500).toISOString() } });
    assert.equal(soon.status, 201);
    assert.equal((await client(app).get(PING, { key: soon.body.key })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    assert.equal((await client(app).get(PING, { key: soon.body.key })).body.error.code, 'key_expired');
  });

  it("reads and replaces any app's manifest with the same body, rules and answers as the app's own endpoint", async () => {
    const { app, db } = await setup();
    const { tenant, session } = await organization(app, db);
    const api = client(app);
    const path = `${C}/apps/${tenant.appId}/statistics`;
    const definition = {
      id: `${tenant.slug}.resolved`,
      label: 'Resolved',
      pillar: 'DELIVERY',
      format: 'number',
      aggregation: 'count',
      sourceEventTypes: ['ticket.resolved'],
      sourceEventCategories: ['TASK_UPDATE'],
    };
    const put = await session.console.put(path, { body: [definition] });
    assert.equal(put.status, 200, put.text);
    const own = await api.get('/api/v1/apps/statistics', { key: tenant.key });
    assert.deepEqual(put.body.statistics, own.body.statistics);
    assert.deepEqual((await session.console.get(path)).body.statistics, own.body.statistics);

    for (const bad of [
      [{ ...definition, id: 'other.resolved' }],
      [{ ...definition, sourceEventTypes: ['not.allowed'] }],
      { statistics: [{ ...definition, label: '' }] },
      [definition, definition],
    ]) {
      const viaConsole = await session.console.put(path, { body: bad });
      const viaKey = await api.put('/api/v1/apps/statistics', { key: tenant.key, body: bad });
      assert.equal(viaConsole.status, 400);
      assert.equal(viaKey.status, 400);
      assert.equal(viaConsole.body.error.message, viaKey.body.error.message);
    }
    assert.deepEqual((await session.console.get(path)).body.statistics, own.body.statistics, 'refused PUTs changed nothing');
  });

  it('changes roles: an admin cannot make or unmake owners, an owner can; the last owner stays', async () => {
    const { app, db } = await setup();
    const tenant = await createTenant(db);
    const owner = await signIn(app, db, { role: 'owner', orgId: tenant.orgId });
    const admin = await signIn(app, db, { role: 'admin', orgId: tenant.orgId });
    const member = await signIn(app, db, { role: 'member', orgId: tenant.orgId });
    const patch = (as: Session, who: Session, role: string) => as.console.patch(`${C}/members/${who.memberId}`, { body: { role } });

    assert.equal((await patch(admin, member, 'owner')).body.error.code, 'insufficient_role');
    assert.equal((await patch(admin, owner, 'member')).body.error.code, 'insufficient_role');
    assert.equal((await admin.console.delete(`${C}/members/${owner.memberId}`)).body.error.code, 'insufficient_role');
    const promoted = await patch(admin, member, 'admin');
    assert.equal(promoted.status, 200, promoted.text);
    assert.equal(promoted.body.role, 'admin');
    assert.equal((await patch(owner, member, 'owner')).body.role, 'owner');
    assert.equal((await patch(admin, admin, 'member')).body.role, 'member', 'an admin may step down');
    const roles = (await owner.console.get(`${C}/members`)).body.items.map((m: { id: string; role: string }) => [m.id, m.role]);
    assert.deepEqual(new Map(roles).get(admin.memberId), 'member');

    // Three owners (the tenant's, `owner`, `member`): demote two, the last one stays.
    const ownerRow = await db.kysely.selectFrom('members').select('id').where('email', '=', tenant.ownerEmail).executeTakeFirstOrThrow();
    assert.equal((await owner.console.delete(`${C}/members/${ownerRow.id}`)).status, 204);
    assert.equal((await patch(owner, member, 'admin')).status, 200);
    const last = await patch(owner, owner, 'admin');
    assert.equal(last.status, 409);
    assert.equal(last.body.error.code, 'last_owner');
    const remove = await owner.console.delete(`${C}/members/${owner.memberId}`);
    assert.equal(remove.status, 409);
    assert.equal(remove.body.error.code, 'last_owner');
  });

  it('lets only one of two owners demoting each other at the same time succeed', async () => {
    const { app, db } = await setup();
    for (let round = 0; round < 3; round++) {
      const a = await signIn(app, db, { role: 'owner' });
      const b = await signIn(app, db, { role: 'owner', orgId: a.orgId });
      const tenantOwner = await db.kysely
        .selectFrom('members')
        .select('id')
        .where('org_id', '=', a.orgId)
        .where('role', '=', 'owner')
        .where('id', 'not in', [a.memberId, b.memberId])
        .executeTakeFirstOrThrow();
      assert.equal((await a.console.delete(`${C}/members/${tenantOwner.id}`)).status, 204);
      const [first, second] = await Promise.all([
        a.console.patch(`${C}/members/${b.memberId}`, { body: { role: 'admin' } }),
        b.console.patch(`${C}/members/${a.memberId}`, { body: { role: 'admin' } }),
      ]);
      // The one that loses finds either no other owner left (409) or itself no longer an owner (403).
      const [won, lost] = [first, second].sort((x, y) => x.status - y.status);
      assert.equal(won?.status, 200, won?.text);
      assert.ok(['last_owner', 'insufficient_role'].includes(lost?.body.error?.code), lost?.text);
      const owners = await db.kysely.selectFrom('members').select('id').where('org_id', '=', a.orgId).where('role', '=', 'owner').execute();
      assert.equal(owners.length, 1);
    }
  });

  it('removes a member and ends their sessions at once', async () => {
    const { app, db } = await setup();
    const { tenant, session } = await organization(app, db);
    const leaving = await signIn(app, db, { role: 'admin', orgId: tenant.orgId });
    assert.equal((await leaving.console.get(`${C}/apps`)).status, 200);
    const removed = await session.console.delete(`${C}/members/${leaving.memberId}`);
    assert.equal(removed.status, 204, removed.text);
    const after = await leaving.console.get(`${C}/apps`);
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'session_required');
    const again = await session.console.delete(`${C}/members/${leaving.memberId}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'member_not_found');
  });

  it("reads the organization with its plan and this month's usage, and changes its name and time zone", async () => {
    const { app, db } = await setup();
    const tenant = await createTenant(db, { maxEventsPerMonth: 1000 });
    const session = await signIn(app, db, { role: 'admin', orgId: tenant.orgId });
    const accepted = await client(app).post('/api/v1/ingest/events', { key: tenant.key, body: { events: [event(), event(), event()] } });
    assert.equal(accepted.status, 202);
    const org = await session.console.get(`${C}/organization`);
    assert.equal(org.status, 200, org.text);
    assert.deepEqual(org.body, {
      id: tenant.orgId,
      name: org.body.name,
      timeZone: 'UTC',
      plan: { apiEnabled: true, maxEventsPerMonth: 1000 },
      usage: { month: new Date().toISOString().slice(0, 7), events: 3 },
    });
    const changed = await session.console.patch(`${C}/organization`, { body: { name: 'Acme', timeZone: 'europe/berlin' } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.name, 'Acme');
    assert.equal(changed.body.timeZone, 'Europe/Berlin');
    for (const body of [{ timeZone: 'Mars/Olympus', name: 'Not applied' }, { timeZone: '+02:00' }, {}, { name: '' }, { name: '   ' }]) {
      const refused = await session.console.patch(`${C}/organization`, { body });
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error.code, 'invalid_body');
    }
    assert.deepEqual(
      { name: (await session.console.get(`${C}/organization`)).body.name },
      { name: 'Acme' },
      'a refused change leaves the name as it was',
    );
  });

  it('keeps an audit log of every change, newest first, paged, with no secret in it', async () => {
    const { app, db } = await setup();
    const { tenant, session } = await organization(app, db);
    const created = await session.console.post(`${C}/apps`, { body: { slug: 'audited', name: 'Audited' } });
    await session.console.put(`${C}/apps/${created.body.id}/allowed-event-types`, { body: { allowedEventTypes: ['x.done'] } });
    const key = await session.console.post(`${C}/apps/${created.body.id}/keys`, { body: {} });
    await session.console.post(`${C}/apps/${created.body.id}/keys/${key.body.id}/revoke`);
    await session.console.put(`${C}/apps/${tenant.appId}/statistics`, { body: [] });
    await client(app).put('/api/v1/apps/statistics', { key: tenant.key, body: [] });
    await session.console.patch(`${C}/organization`, { body: { timeZone: 'Asia/Tokyo' } });

    const log = await session.console.get(`${C}/audit-log?limit=200`);
    assert.equal(log.status, 200, log.text);
    assert.equal(log.body.nextCursor, null);
    const newest = log.body.items.slice(0, 7).map((e: { action: string; actor: { kind: string } }) => `${e.action} ${e.actor.kind}`);
    assert.deepEqual(newest, [
      'organization.time_zone_changed member',
      'app.manifest_replaced api_key',
      'app.manifest_replaced member',
      'key.revoked member',
      'key.issued member',
      'app.allowed_event_types_changed member',
      'app.created member',
    ]);
    assert.deepEqual(log.body.items[0].actor, { kind: 'member', memberId: session.memberId, email: session.email });
    assert.deepEqual(log.body.items[1].actor, { kind: 'api_key', keyId: tenant.keyId });
    assert.deepEqual(log.body.items[4].target, { type: 'key', id: key.body.id });
    for (const secret of [key.body.key.slice(15), hashApiKey(key.body.key), tenant.key.slice(15), hashApiKey(tenant.key)]) {
      assert.ok(!log.text.includes(secret), 'no key or key hash in the audit log');
    }

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { items: Array<{ id: string }>; nextCursor: string | null } } = await session.console.get(
        `${C}/audit-log?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.body.items.map((e) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      log.body.items.map((e: { id: string }) => e.id),
    );
    for (const query of ['limit=0', 'limit=201', 'cursor=forged', 'limit=x', 'unknown=1']) {
      const res = await session.console.get(`${C}/audit-log?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.error.code, 'invalid_query');
    }
  });

  it("answers another organization's app, key and member ids 404 with the resource's code, never their data", async () => {
    const { app, db } = await setup();
    const { tenant, session } = await organization(app, db);
    const other: Tenant = await createTenant(db);
    const stranger = await signIn(app, db, { role: 'admin', orgId: other.orgId });
    const appCalls = adminCalls({ appId: other.appId, keyId: other.keyId, memberId: stranger.memberId }).filter(([, path]) =>
      path.includes(`/apps/${other.appId}`),
    );
    for (const [method, path, body] of appCalls) {
      const res = await session.console[method](path, { body });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.body.error.code, 'app_not_found');
      assert.ok(!res.text.includes(other.slug));
    }
    const foreignKey = await session.console.post(`${C}/apps/${tenant.appId}/keys/${other.keyId}/revoke`);
    assert.equal(foreignKey.status, 404);
    assert.equal(foreignKey.body.error.code, 'key_not_found');
    for (const [method, body] of [
      ['patch', { role: 'member' }],
      ['delete', undefined],
    ] as const) {
      const res = await session.console[method](`${C}/members/${stranger.memberId}`, { body });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'member_not_found');
    }
    const lists = [
      await session.console.get(`${C}/apps`),
      await session.console.get(`${C}/members`),
      await session.console.get(`${C}/audit-log`),
    ];
    for (const list of lists) {
      for (const id of [other.appId, other.keyId, stranger.memberId, other.orgId]) assert.ok(!list.text.includes(id), `${id} not shown`);
    }
    // Nothing of the other organization changed.
    assert.equal((await client(app).get(PING, { key: other.key })).status, 200);
    assert.equal(
      (await stranger.console.get(`${C}/members`)).body.items.find((m: { id: string }) => m.id === stranger.memberId).role,
      'admin',
    );
    const malformed = await session.console.get(`${C}/apps/not-an-app-id`);
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, 'invalid_query');
  });

  it('changes nothing without the CSRF token', async () => {
    const { app, db } = await setup();
    const { tenant, session } = await organization(app, db);
    const res = await client(app, { Cookie: session.cookie }).post(`${C}/apps/${tenant.appId}/keys/${tenant.keyId}/revoke`);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'csrf_failed');
    assert.equal((await client(app).get(PING, { key: tenant.key })).status, 200);
  });
});

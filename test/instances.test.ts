import assert from 'node:assert/strict';
import { createApp } from '../src/app';
import { eventsCounted, monthOf } from '../src/data/usage';
import * as administration from '../src/domain/administration';
import { createServices } from '../src/services';
import type { Schema } from '../src/contract/types';
import { client } from './support/client';
import { testDialect } from './support/database';
import { event } from './support/events';
import { definition } from './support/rollups';
import { createTenant, silentLogger, testConfig } from './support/fixtures';
import { sharedDatabase } from './support/database';

const EVENTS = '/api/v1/ingest/events';
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe(`Several instances sharing the database${process.env.TEST_REDIS ? ' and Redis' : ''} (${testDialect})`, () => {
  const services: Array<ReturnType<typeof createServices>> = [];
  async function instances(env: Record<string, string>) {
    const shared = await sharedDatabase();
    const config = testConfig(shared, { ...env, ...(process.env.TEST_REDIS ? { REDIS_URL: redisUrl } : {}) });
    const make = () => {
      const s = createServices(config, shared.db, { logger: silentLogger });
      services.push(s);
      return client(createApp(config, shared.db, { logger: silentLogger, services: s }));
    };
    return { a: make(), b: make(), db: shared.db };
  }
  after(async () => Promise.all(services.map((s) => s.close())));

  it('replays on instance B the response instance A stored', async () => {
    const { a, b, db } = await instances({});
    const tenant = await createTenant(db);
    const request = { key: tenant.key, headers: { 'Idempotency-Key': 'cross-instance' }, body: { events: [event()] } };
    const first = await a.post(EVENTS, request);
    const replay = await b.post(EVENTS, request);
    assert.equal(first.status, 202);
    assert.equal(replay.status, 202);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.text, first.text);
  });

  /**
   * 20 concurrent batches of 10 across both instances against a quota of 137, after `first`
   * events sent alone: exactly 137 stored and counted, whatever the interleaving.
   */
  async function sellOut(actor: Schema<'IngestEvent'>['actor'] | undefined, first: number) {
    const { a, b, db } = await instances({ RATE_LIMIT_PER_KEY: '1000', RATE_LIMIT_PER_ORG: '1000' });
    const tenant = await createTenant(db, { maxEventsPerMonth: 137 });
    const one = () => event(actor ? { actor } : {});
    for (let i = 0; i < first; i++) assert.equal((await a.post(EVENTS, { key: tenant.key, body: { events: [one()] } })).status, 202);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).post(EVENTS, { key: tenant.key, body: { events: Array.from({ length: 10 }, one) } }),
      ),
    );
    for (const r of responses) assert.ok([202, 207, 402].includes(r.status), `status ${r.status}`);
    assert.equal(
      responses.reduce((sum, r) => sum + (r.body.accepted ?? 0), 0),
      137 - first,
    );
    const stored = await db.kysely.selectFrom('events').select('id').where('org_id', '=', tenant.orgId).execute();
    assert.equal(stored.length, 137);
    assert.equal(await eventsCounted(db.kysely, tenant.orgId, monthOf(new Date())), 137);
  }

  it('never sells the quota twice: 20 concurrent batches across both instances stop at the exact limit', async function () {
    this.timeout(60_000);
    await sellOut(undefined, 0);
  });

  it('never sells the quota twice for known workers either: their batches are judged and stored in one statement on PostgreSQL', async function () {
    this.timeout(60_000);
    // The first event makes the worker (and the month's usage rows): the rest name a known worker.
    await sellOut({ externalId: 'known' }, 1);
  });

  it('counts the concurrent batches of an organization without a quota exactly, and a quota set later counts them all', async function () {
    this.timeout(60_000);
    const { a, b, db } = await instances({ RATE_LIMIT_PER_KEY: '1000', RATE_LIMIT_PER_ORG: '1000' });
    const tenant = await createTenant(db);
    const month = monthOf(new Date());
    const ten = () => ({ events: Array.from({ length: 10 }, () => event({ actor: { externalId: 'known' } })) });
    assert.equal((await a.post(EVENTS, { key: tenant.key, body: { events: [event({ actor: { externalId: 'known' } })] } })).status, 202);
    // On PostgreSQL these count into their connections' slots, not the row a quota reserves in.
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).post(EVENTS, { key: tenant.key, body: ten() })),
    );
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([202]));
    assert.equal(await eventsCounted(db.kysely, tenant.orgId, month), 201);
    // The first batch under the quota makes the month's missing rows (step by step), the second finds them all (one statement).
    for (const limit of [206, 211]) {
      await administration.setPlan(db, tenant.orgId, { maxEventsPerMonth: limit });
      const crossing = await a.post(EVENTS, { key: tenant.key, body: ten() });
      assert.equal(crossing.status, 207);
      assert.equal(crossing.body.accepted, 5);
      assert.equal(await eventsCounted(db.kysely, tenant.orgId, month), limit);
    }
    assert.equal((await b.post(EVENTS, { key: tenant.key, body: ten() })).status, 402);
  });

  describe("judges each batch by the app's rules as stored, changed anywhere, after instance B has judged batches by them", () => {
    // B judges by them first: once for a new worker, then for a known one (on PostgreSQL, the rules it then keeps).
    async function judgedOnB() {
      const { a, b, db } = await instances({});
      const tenant = await createTenant(db);
      const manifest = (...names: string[]) =>
        a.put('/api/v1/apps/statistics', { key: tenant.key, body: names.map((name) => definition(tenant.slug, name)) });
      assert.equal((await manifest('old')).status, 200);
      const actor = { externalId: 'known' };
      const send = (events: Schema<'IngestEvent'>[]) => b.post(EVENTS, { key: tenant.key, body: { events } });
      for (let i = 0; i < 2; i++) assert.equal((await send([event({ actor })])).status, 202);
      /** Sends the events through B: answered 207, with these [index, code] rejected. */
      const partly = async (events: Schema<'IngestEvent'>[], rejected: Array<[number, string]>) => {
        const res = await send(events);
        assert.equal(res.status, 207);
        assert.deepEqual(
          res.body.results.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
          rejected,
        );
      };
      return { db, tenant, actor, send, partly, manifest };
    }

    for (const who of ['a known worker', 'a new worker']) {
      it(`an event type no longer allowed, sent for ${who}`, async () => {
        const { db, tenant, actor, partly } = await judgedOnB();
        await administration.changeAllowedEventTypes(db, tenant.appId, ['build.finished'], false);
        const events = [event(), event({ eventType: 'build.finished' })].map((e) => (who === 'a known worker' ? { ...e, actor } : e));
        await partly(events, [[1, 'forbidden_event_type']]);
      });
    }

    it('a statistic removed from the manifest, and one added', async () => {
      const { tenant, actor, partly, manifest } = await judgedOnB();
      assert.equal((await manifest('new')).status, 200);
      const named = (name: string) => event({ actor, statisticId: `${tenant.slug}.${name}` });
      await partly([named('old'), named('new')], [[0, 'invalid_body']]);
    });

    it('a statistic added to the manifest, named by every event of the batch', async () => {
      const { tenant, actor, send, manifest } = await judgedOnB();
      assert.equal((await manifest('old', 'new')).status, 200);
      const res = await send([event({ actor, statisticId: `${tenant.slug}.new` })]);
      assert.equal(res.status, 202);
    });

    it('a quota already used up', async () => {
      const { db, tenant, actor, send } = await judgedOnB();
      await administration.setPlan(db, tenant.orgId, { maxEventsPerMonth: 2 });
      const res = await send([event({ actor })]);
      assert.equal(res.status, 402);
      assert.equal(res.body.error.code, 'quota_exceeded');
      assert.equal(await eventsCounted(db.kysely, tenant.orgId, monthOf(new Date())), 2);
    });
  });

  it('shares the per-key rate limit across instances when Redis holds it', async function () {
    if (!process.env.TEST_REDIS) this.skip();
    const { a, b, db } = await instances({ RATE_LIMIT_PER_KEY: '4', RATE_LIMIT_PER_ORG: '100' });
    const tenant = await createTenant(db);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await (i % 2 ? a : b).get('/api/v1/ingest/ping', { key: tenant.key })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
  });
});

import assert from 'node:assert/strict';
import { eventsCounted, monthOf } from '../src/data/usage';
import { setPlan } from '../src/domain/administration';
import { client } from './support/client';
import { testDialect } from './support/database';
import { event } from './support/events';
import { setup } from './support/fixtures';

const EVENTS = '/api/v1/ingest/events';
type Setup = Awaited<ReturnType<typeof setup>>;

function used(db: Setup['db'], orgId: string): Promise<number> {
  return eventsCounted(db.kysely, orgId, monthOf(new Date()));
}

describe('Monthly event quota', () => {
  it('accepts the events that fit, in order, and rejects the rest with quota_exceeded at the exact boundary', async () => {
    const { app, db, tenant } = await setup({}, { maxEventsPerMonth: 5 });
    const api = client(app);
    assert.equal((await api.post(EVENTS, { key: tenant.key, body: { events: [event(), event(), event()] } })).status, 202);
    const crossing = await api.post(EVENTS, { key: tenant.key, body: { events: [event(), event(), event(), event()] } });
    assert.equal(crossing.status, 207);
    assert.equal(crossing.body.accepted, 2);
    assert.deepEqual(
      crossing.body.results.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
      [
        [2, 'quota_exceeded'],
        [3, 'quota_exceeded'],
      ],
    );
    assert.equal(await used(db, tenant.orgId), 5);
  });

  it('holds the exact boundary for batches of known workers too (stored in one statement on PostgreSQL)', async () => {
    const { app, db, tenant } = await setup({}, { maxEventsPerMonth: 6 });
    const api = client(app);
    const known = { externalId: 'known-1', email: 'known@x.example' };
    const first = await api.post(EVENTS, { key: tenant.key, body: { events: [event({ actor: known })] } });
    assert.equal(first.status, 202);
    const { worker_id: workerId } = await db.kysely
      .selectFrom('events')
      .select('worker_id')
      .where('org_id', '=', tenant.orgId)
      .executeTakeFirstOrThrow();
    const actors = [{ workerId }, { externalId: 'known-1' }, { email: 'KNOWN@x.example' }, { workerId: 'wkr_000000000nothing' }];
    const crossing = await api.post(EVENTS, {
      key: tenant.key,
      body: { events: [...actors, ...actors].map((actor) => event({ actor })) },
    });
    assert.equal(crossing.status, 207);
    assert.equal(crossing.body.accepted, 5);
    assert.deepEqual(
      crossing.body.results.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
      [
        [3, 'worker_not_found'],
        [6, 'quota_exceeded'],
        [7, 'worker_not_found'],
      ],
    );
    const stored = await db.kysely.selectFrom('events').select('worker_id').where('org_id', '=', tenant.orgId).execute();
    assert.deepEqual(
      stored.map((e) => e.worker_id),
      Array(6).fill(workerId),
    );
    assert.equal(await used(db, tenant.orgId), 6);
    const exhausted = await api.post(EVENTS, { key: tenant.key, body: { events: [event({ actor: { workerId } })] } });
    assert.equal(exhausted.status, 402);
  });

  it('does not spend quota on events rejected for other reasons', async () => {
    const { app, db, tenant } = await setup({}, { maxEventsPerMonth: 1 });
    const res = await client(app).post(EVENTS, {
      key: tenant.key,
      body: { events: [event({ eventType: 'deploy.done' }), event({ actor: { workerId: 'wkr_000000000nothing' } }), event(), event()] },
    });
    assert.equal(res.status, 207);
    assert.deepEqual(
      res.body.results.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
      [
        [0, 'forbidden_event_type'],
        [1, 'worker_not_found'],
        [3, 'quota_exceeded'],
      ],
    );
    assert.equal(await used(db, tenant.orgId), 1);
  });

  it('answers 402 quota_exceeded for a batch once the month is exhausted, storing nothing', async () => {
    const { app, db, tenant } = await setup({}, { maxEventsPerMonth: 2 });
    const api = client(app);
    assert.equal((await api.post(EVENTS, { key: tenant.key, body: { events: [event(), event()] } })).status, 202);
    const res = await api.post(EVENTS, { key: tenant.key, body: { events: [event()] } });
    assert.equal(res.status, 402);
    assert.equal(res.body.error.code, 'quota_exceeded');
    assert.match(res.body.error.message, /monthly event quota of 2 is exhausted/);
    assert.equal((await db.kysely.selectFrom('events').select('id').where('org_id', '=', tenant.orgId).execute()).length, 2);
  });

  it('applies a raised quota at once and does not count snapshots', async () => {
    const { app, db, tenant } = await setup({}, { maxEventsPerMonth: 1 });
    const api = client(app);
    assert.equal((await api.post(EVENTS, { key: tenant.key, body: { events: [event()] } })).status, 202);
    const snapshot = await api.post('/api/v1/ingest/snapshots', {
      key: tenant.key,
      body: { snapshotType: 'load.now', actor: { externalId: 's' }, metrics: { a: 1 } },
    });
    assert.equal(snapshot.status, 202);
    assert.equal(await used(db, tenant.orgId), 1);
    await setPlan(db, tenant.orgId, { maxEventsPerMonth: 2 });
    assert.equal((await api.post(EVENTS, { key: tenant.key, body: { events: [event()] } })).status, 202);
  });

  it(`counts a batch without a quota that creates its workers (stored in a transaction) ${testDialect === 'postgres' ? "into its backend's slot, where the month's row queued such batches one behind the other" : "into the month's row"}`, async () => {
    const { app, db, tenant } = await setup();
    const res = await client(app).post(EVENTS, { key: tenant.key, body: { events: [event(), event(), event()] } });
    assert.equal(res.status, 202);
    const countsIn = (table: 'monthly_usage' | 'monthly_usage_slots') =>
      db.kysely
        .selectFrom(table)
        .select('event_count')
        .where('org_id', '=', tenant.orgId)
        .where('month', '=', monthOf(new Date()))
        .execute();
    const counted = { row: await countsIn('monthly_usage'), slots: await countsIn('monthly_usage_slots') };
    const three = [{ event_count: 3 }];
    assert.deepEqual(counted, testDialect === 'postgres' ? { row: [], slots: three } : { row: three, slots: [] });
    assert.equal(await used(db, tenant.orgId), 3);
  });

  it('counts per calendar month in UTC', () => {
    assert.equal(monthOf(new Date('2026-11-30T23:59:59.999Z')), '2026-11');
    assert.equal(monthOf(new Date('2026-12-01T00:30:00+01:00')), '2026-11');
    assert.equal(monthOf(new Date('2026-12-01T00:00:00Z')), '2026-12');
  });
});

import assert from 'node:assert/strict';
import { createApp } from '../src/app';
import type { DatabaseConfig } from '../src/config';
import { openDatabase, type Db } from '../src/data/db';
import { insertEvents } from '../src/data/events';
import { newId } from '../src/data/ids';
import { RetentionSweeper } from '../src/domain/retention';
import { registry } from '../src/metrics';
import { createServices } from '../src/services';
import { client } from './support/client';
import { freshDatabase, testDialect } from './support/database';
import { createTenant, silentLogger, testConfig, type Tenant } from './support/fixtures';
import { parseMetrics, valueOf } from './support/prometheus';

const DAY_MS = 86_400_000;
const now = new Date('2026-11-22T12:00:00.000Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * DAY_MS).toISOString();

async function deletedSoFar(): Promise<number> {
  return valueOf(parseMetrics(await registry.metrics()), 'ingest_retention_deleted_rows_total');
}

/** `count` event rows of the tenant's organization at `ts`, written straight through the data layer. */
async function insertRows(db: Db, tenant: Tenant, count: number, ts: string): Promise<void> {
  const origin = {
    principal: { orgId: tenant.orgId, appId: tenant.appId, integrationId: `custom:${tenant.slug}` },
    requestId: 'req_bulk',
    receivedAt: new Date(ts),
  };
  const event = { eventType: 'ticket.resolved', category: 'TASK_UPDATE', actor: { externalId: 'bulk' }, timestamp: ts } as const;
  await db.transaction((trx) =>
    insertEvents(
      trx,
      origin,
      Array.from({ length: count }, () => ({
        kind: 'event' as const,
        id: newId('evt'),
        workerId: 'wrk_bulk',
        ts,
        event,
        metadataJson: null,
      })),
    ),
  );
}

async function countWhere(db: Db, orgId: string, ts: string, older: boolean): Promise<number> {
  const row = await db.kysely
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('ts', older ? '<' : '>=', ts)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe(`Retention: EVENT_RETENTION_DAYS (${testDialect})`, () => {
  let db: Db;
  let dbConfig: DatabaseConfig;
  before(async () => {
    ({ db, config: dbConfig } = await freshDatabase());
  });
  after(async () => db?.close());

  it('deletes timeline rows older than the retention, keeps newer ones, current snapshots and their history rows', async function () {
    this.timeout(30_000);
    const tenant = await createTenant(db);
    const config = testConfig({ config: { kind: 'sqlite', path: ':memory:' } });
    const services = createServices(config, db, { logger: silentLogger });
    const api = client(createApp(config, db, { logger: silentLogger, services }));
    const post = async (path: string, body: unknown) => assert.equal((await api.post(path, { key: tenant.key, body })).status, 202);
    const eventAt = (days: number, id: string) => ({
      eventType: 'ticket.resolved',
      category: 'TASK_UPDATE',
      actor: { externalId: id },
      timestamp: daysAgo(days),
    });
    const snapshotAt = (days: number, id: string, type: string) => ({
      snapshotType: type,
      actor: { externalId: id },
      metrics: { days },
      timestamp: daysAgo(days),
    });
    try {
      await post('/api/v1/ingest/events', { events: [eventAt(100, 'a'), eventAt(61, 'a'), eventAt(59, 'a'), eventAt(1, 'b')] });
      await post('/api/v1/ingest/snapshots', snapshotAt(100, 'a', 'only.old')); // current although old: stays
      await post('/api/v1/ingest/snapshots', snapshotAt(100, 'b', 'replaced')); // history of a replaced snapshot: goes
      await post('/api/v1/ingest/snapshots', snapshotAt(5, 'b', 'replaced'));
      await post('/api/v1/ingest/snapshots', snapshotAt(90, 'c', 'late')); // current
      await post('/api/v1/ingest/snapshots', snapshotAt(120, 'c', 'late')); // arrived later but older: history only, goes
      await insertRows(db, tenant, 25, daysAgo(70));
    } finally {
      await services.close();
    }
    const metricBefore = await deletedSoFar();

    const deleted = await new RetentionSweeper(db, { events: 60 }, silentLogger, { batchSize: 4, restFactor: 0 }).sweep(now);
    assert.equal(deleted, 2 + 2 + 25, 'two old events, two old snapshot history rows, the bulk rows');
    assert.equal((await deletedSoFar()) - metricBefore, deleted);

    const left = await db.kysely
      .selectFrom('events')
      .select(['kind', 'event_type', 'ts'])
      .where('org_id', '=', tenant.orgId)
      .orderBy('ts')
      .execute();
    assert.deepEqual(
      left.map((r) => [r.kind, r.event_type, r.ts]),
      [
        ['snapshot', 'only.old', daysAgo(100)],
        ['snapshot', 'late', daysAgo(90)],
        ['event', 'ticket.resolved', daysAgo(59)],
        ['snapshot', 'replaced', daysAgo(5)],
        ['event', 'ticket.resolved', daysAgo(1)],
      ],
    );
    const current = await db.kysely
      .selectFrom('current_snapshots')
      .select(['snapshot_type', 'event_id'])
      .where('org_id', '=', tenant.orgId)
      .execute();
    assert.equal(current.length, 3, 'current snapshots are never touched');
    for (const { event_id } of current) {
      assert.ok(await db.kysely.selectFrom('events').select('id').where('id', '=', event_id).executeTakeFirst(), 'their history row stays');
    }
    assert.equal(await new RetentionSweeper(db, { events: 60 }, silentLogger).sweep(now), 0, 'a second sweep finds nothing');
  });

  it('runs in the background from start() until close()', async () => {
    const tenant = await createTenant(db);
    await insertRows(db, tenant, 10, daysAgo(400));
    await insertRows(db, tenant, 3, new Date().toISOString());
    const sweeper = new RetentionSweeper(db, { events: 365 }, silentLogger, { batchSize: 3, intervalMs: 60_000 });
    sweeper.start(0);
    for (let i = 0; i < 100 && (await countWhere(db, tenant.orgId, daysAgo(365), true)) > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await sweeper.close();
    assert.equal(await countWhere(db, tenant.orgId, daysAgo(365), true), 0);
    assert.equal(await countWhere(db, tenant.orgId, daysAgo(365), false), 3);
  });

  it('is harmless when several instances sweep the same database at once', async function () {
    this.timeout(60_000);
    const tenant = await createTenant(db);
    await insertRows(db, tenant, 3000, daysAgo(200));
    await insertRows(db, tenant, 500, daysAgo(10));
    const others = [openDatabase(dbConfig), openDatabase(dbConfig)];
    try {
      const counts = await Promise.all(
        [db, ...others].map((handle) =>
          new RetentionSweeper(handle, { events: 60 }, silentLogger, { batchSize: 250, restFactor: 0 }).sweep(now),
        ),
      );
      assert.equal(
        counts.reduce((a, b) => a + b, 0),
        3000,
        `each expired row deleted once between them: ${counts.join(' + ')}`,
      );
    } finally {
      await Promise.all(others.map((handle) => handle.close()));
    }
    assert.equal(await countWhere(db, tenant.orgId, daysAgo(60), true), 0);
    assert.equal(await countWhere(db, tenant.orgId, daysAgo(60), false), 500);
  });
});

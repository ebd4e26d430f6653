import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import { migrate, migrationNames, openDatabase, pendingMigrations, type Db } from '../src/data/db';
import { eventsCounted } from '../src/data/usage';
import { freshDatabaseConfig, testDialect } from './support/database';
import { databaseUrlOf } from './support/fixtures';

const INSTANCES = 3;

function migrateInProcess(databaseUrl: string, startAt: number): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'support', 'migrate-process.ts')], {
    env: { ...process.env, DATABASE_URL: databaseUrl, START_AT: String(startAt) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += String(chunk)));
  child.stderr.on('data', (chunk) => (err += String(chunk)));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

/** Runs `work` on a database of its own, with no migration applied, and closes it. */
async function onFreshDatabase(work: (db: Db) => Promise<void>): Promise<void> {
  const db = openDatabase(await freshDatabaseConfig());
  try {
    await work(db);
  } finally {
    await db.close();
  }
}

describe(`Migrations at start (${testDialect})`, () => {
  it(`are applied once when ${INSTANCES} instances start together on an empty database`, async function () {
    this.timeout(120_000);
    const config = await freshDatabaseConfig();
    // Far enough ahead for every process to have loaded and connected before it.
    const startAt = Date.now() + 8_000;
    const results = await Promise.all(Array.from({ length: INSTANCES }, () => migrateInProcess(databaseUrlOf(config), startAt)));
    for (const result of results) {
      assert.equal(result.code, 0, result.err);
      assert.equal(result.out.trim(), 'migrated');
    }
    const db = openDatabase(config);
    try {
      assert.deepEqual(await pendingMigrations(db), []);
      const applied = await db.kysely
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .execute();
      assert.deepEqual(
        applied.map((row) => (row as { name: string }).name),
        migrationNames(),
        'each migration recorded once',
      );
    } finally {
      await db.close();
    }
  });

  it('006 keeps every part of the rollups; on SQLite their tables then hold their rows in key order (WITHOUT ROWID)', async () => {
    await onFreshDatabase(async (db) => {
      await migrate(db, '005_rollups');
      const key = { org_id: 'org_1', generation: 1, statistic_id: 'app.done', day: '2026-11-02', pillar: 'DELIVERY' };
      const parts = { count: 3, sum: 1.25, numerator: 2, denominator: 3 };
      await db.kysely
        .insertInto('rollup_days')
        .values({ ...key, worker_id: 'wrk_1', ...parts })
        .execute();
      await db.kysely
        .insertInto('rollup_org_days')
        .values({ ...key, ...parts })
        .execute();
      await migrate(db);
      assert.deepEqual(await pendingMigrations(db), []);
      assert.deepEqual(await db.kysely.selectFrom('rollup_days').selectAll().execute(), [{ ...key, worker_id: 'wrk_1', ...parts }]);
      assert.deepEqual(await db.kysely.selectFrom('rollup_org_days').selectAll().execute(), [{ ...key, ...parts }]);
      // The key still holds: a second row with it is refused.
      await assert.rejects(
        db.kysely
          .insertInto('rollup_org_days')
          .values({ ...key, ...parts })
          .execute(),
      );
      if (db.dialect === 'sqlite') {
        const tables = await sql<{ sql: string }>`select sql from sqlite_master where name in ('rollup_days', 'rollup_org_days')`.execute(
          db.kysely,
        );
        assert.equal(tables.rows.length, 2);
        for (const { sql: text } of tables.rows) assert.match(text, /without rowid\s*$/i);
      }
    });
  });
  it("009 leaves a third of the parts tables' new pages free on PostgreSQL, for updates that change no index entry", async function () {
    if (testDialect !== 'postgres') this.skip();
    await onFreshDatabase(async (db) => {
      await migrate(db);
      const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
        select relname, reloptions from pg_class
        where relnamespace = current_schema()::regnamespace and relname in ('rollup_days', 'rollup_org_days') order by relname`.execute(
        db.kysely,
      );
      assert.deepEqual(rows, [
        { relname: 'rollup_days', reloptions: ['fillfactor=70'] },
        { relname: 'rollup_org_days', reloptions: ['fillfactor=70'] },
      ]);
    });
  });

  it('007 gives each waiting batch the first and last time of its events, none when its events are gone', async () => {
    await onFreshDatabase(async (db) => {
      await migrate(db, '006_clustered_rollups');
      const event = (id: string, ts: string, orgId = 'org_1') => ({
        id,
        org_id: orgId,
        app_id: 'app_1',
        worker_id: 'wrk_1',
        integration_id: 'int_1',
        kind: 'event' as const,
        event_type: 'ticket.resolved',
        ts,
        request_id: 'req_1',
        received_at: '2026-11-04T00:00:00.000Z',
        batch_id: 'evt_a',
      });
      await db.kysely
        .insertInto('events')
        .values([
          event('evt_a', '2026-11-02T10:00:00.000Z'),
          event('evt_b', '2026-11-03T10:00:00.000Z'),
          event('evt_c', '2026-11-01T10:00:00.000Z'),
          // Another organization's event with an id the batch names is not the batch's.
          event('evt_d', '2026-10-01T10:00:00.000Z', 'org_2'),
        ])
        .execute();
      const batch = (id: string, eventIds: string[]) => ({
        id,
        org_id: 'org_1',
        app_id: 'app_1',
        event_ids: JSON.stringify(eventIds),
        created_at: '2026-11-04T00:00:00.000Z',
        applied_generation: null,
      });
      await db.kysely
        .insertInto('rollup_outbox')
        .values([batch('evt_a', ['evt_a', 'evt_b', 'evt_c', 'evt_d']), batch('evt_x', ['evt_x', 'evt_y'])])
        .execute();
      await migrate(db);
      assert.deepEqual(await db.kysely.selectFrom('rollup_outbox').select(['id', 'first_ts', 'last_ts']).orderBy('id').execute(), [
        { id: 'evt_a', first_ts: '2026-11-01T10:00:00.000Z', last_ts: '2026-11-03T10:00:00.000Z' },
        { id: 'evt_x', first_ts: null, last_ts: null },
      ]);
    });
  });
  it("011 (PostgreSQL): event ids compare in code-unit order even where the database's collation is a language's", async function () {
    if (testDialect !== 'postgres') this.skip();
    await onFreshDatabase(async (db) => {
      await migrate(db, '010_day_list_tags');
      const collation = async () =>
        (
          await sql<{ collation: string }>`select collation_name as collation from information_schema.columns
            where table_schema = current_schema() and table_name = 'events' and column_name = 'id'`.execute(db.kysely)
        ).rows;
      // In English "~" sorts before letters, and "-" and "_" before them: the ids a batch drew are no range.
      await sql`alter table events alter column id type text collate "en-x-icu"`.execute(db.kysely);
      assert.deepEqual(await collation(), [{ collation: 'en-x-icu' }]);
      await migrate(db);
      assert.deepEqual(await collation(), [{ collation: 'C' }]);
    });
  });

  it('012 drops the lists of event ids from the outbox, keeping the batches that wait', async () => {
    await onFreshDatabase(async (db) => {
      await migrate(db, '011_event_id_order');
      await sql`insert into rollup_outbox (id, org_id, app_id, event_ids, first_ts, last_ts, created_at)
        values ('evt_a', 'org_1', 'app_1', '["evt_a","evt_b"]', '2026-11-01T10:00:00.000Z', '2026-11-01T11:00:00.000Z', '2026-11-04T00:00:00.000Z')`.execute(
        db.kysely,
      );
      await migrate(db);
      assert.deepEqual(await db.kysely.selectFrom('rollup_outbox').selectAll().execute(), [
        {
          id: 'evt_a',
          org_id: 'org_1',
          app_id: 'app_1',
          first_ts: '2026-11-01T10:00:00.000Z',
          last_ts: '2026-11-01T11:00:00.000Z',
          created_at: '2026-11-04T00:00:00.000Z',
          applied_generation: null,
        },
      ]);
    });
  });

  it("013 adds slots beside each month's count, which the previous version goes on counting in as before", async () => {
    await onFreshDatabase(async (db) => {
      await migrate(db, '012_outbox_without_event_ids');
      await sql`insert into monthly_usage (org_id, month, event_count) values ('org_1', '2026-10', 12), ('org_1', '2026-11', 7)`.execute(
        db.kysely,
      );
      await migrate(db);
      // The previous version's count of a batch, as it runs during a rolling upgrade.
      await sql`insert into monthly_usage (org_id, month, event_count) values ('org_1', '2026-11', 3)
        on conflict (org_id, month) do update set event_count = monthly_usage.event_count + excluded.event_count`.execute(db.kysely);
      await db.kysely.insertInto('monthly_usage_slots').values({ org_id: 'org_1', month: '2026-11', slot: 3, event_count: 5 }).execute();
      assert.equal(await eventsCounted(db.kysely, 'org_1', '2026-10'), 12);
      assert.equal(await eventsCounted(db.kysely, 'org_1', '2026-11'), 7 + 3 + 5);
    });
  });

  it('010 drops the lists made before tags (the rollups worker lists their days again), and lists then carry one', async () => {
    await onFreshDatabase(async (db) => {
      await migrate(db, '009_rollup_fillfactor');
      const list = { org_id: 'org_1', generation: 1, statistic_id: 'a.b', day: '2026-11-01', parts: 'count', stamp: 3, workers: 'w1 3' };
      await sql`insert into rollup_day_lists (org_id, generation, statistic_id, day, parts, stamp, workers)
        values (${list.org_id}, ${list.generation}, ${list.statistic_id}, ${list.day}, ${list.parts}, ${list.stamp}, ${list.workers})`.execute(
        db.kysely,
      );
      await migrate(db);
      assert.deepEqual(await db.kysely.selectFrom('rollup_day_lists').selectAll().execute(), []);
      await db.kysely
        .insertInto('rollup_day_lists')
        .values({ ...list, tag: 't1' })
        .execute();
      assert.deepEqual(await db.kysely.selectFrom('rollup_day_lists').select(['day', 'tag']).execute(), [{ day: '2026-11-01', tag: 't1' }]);
    });
  });

  it("014 takes each day's list out of the table's key on SQLite (found through a small index, the list last); PostgreSQL keeps its lists", async () => {
    await onFreshDatabase(async (db) => {
      await migrate(db, '013_monthly_usage_slots');
      const list = {
        org_id: 'org_1',
        generation: 1,
        statistic_id: 'a.b',
        day: '2026-11-01',
        parts: 'count',
        stamp: 3,
        workers: 'w1 3',
        tag: 't1',
      };
      await db.kysely.insertInto('rollup_day_lists').values(list).execute();
      await migrate(db);
      const lists = await db.kysely.selectFrom('rollup_day_lists').select(['day', 'tag', 'workers']).execute();
      if (db.dialect === 'postgres') {
        assert.deepEqual(lists, [{ day: list.day, tag: list.tag, workers: list.workers }]);
        return;
      }
      // Dropped, as 010 dropped them: the rollups worker lists their days again.
      assert.deepEqual(lists, []);
      const table = await sql<{ sql: string }>`select sql from sqlite_master where name = 'rollup_day_lists'`.execute(db.kysely);
      assert.doesNotMatch(table.rows[0]?.sql ?? '', /without rowid/i);
      const columns = await sql<{ name: string }>`select name from pragma_table_info('rollup_day_lists') order by cid`.execute(db.kysely);
      assert.deepEqual(
        columns.rows.map((c) => c.name),
        ['org_id', 'generation', 'statistic_id', 'day', 'parts', 'stamp', 'tag', 'workers'],
      );
      const plan = await sql<{ detail: string }>`explain query plan select tag from rollup_day_lists
        where org_id = ${list.org_id} and generation = ${list.generation} and statistic_id = ${list.statistic_id} and day = ${list.day}`.execute(
        db.kysely,
      );
      assert.match(plan.rows.map((r) => r.detail).join('\n'), /USING INDEX sqlite_autoindex_rollup_day_lists/);
      await db.kysely.insertInto('rollup_day_lists').values(list).execute();
      // The key still holds: a second list of the day is refused.
      await assert.rejects(db.kysely.insertInto('rollup_day_lists').values(list).execute());
    });
  });
});

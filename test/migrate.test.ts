import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import { migrate, migrationNames, openDatabase, pendingMigrations } from '../src/data/db';
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
    const db = openDatabase(await freshDatabaseConfig());
    try {
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
    } finally {
      await db.close();
    }
  });
});

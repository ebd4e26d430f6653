import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { runIngestctl } from '../src/cli/ingestctl';
import { migrationNames } from '../src/data/db';
import { freshDatabaseConfig, testDialect } from './support/database';
import { databaseUrlOf } from './support/fixtures';
import { startServer } from './support/server-process';

async function ingestctl(env: Record<string, string>, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runIngestctl(argv, { env, out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

/** Every stored event, in id order, hashed: two databases with the same timeline have the same digest. */
function timelineDigest(file: string): { rows: number; digest: string; batches: Map<string, number> } {
  const db = new SqliteDatabase(file, { readonly: true });
  try {
    const rows = db.prepare('select id, org_id, worker_id, event_type, ts, metadata from events order by id').all() as Array<{
      metadata: string;
    }>;
    const batches = new Map<string, number>();
    for (const row of rows) {
      const batch = (JSON.parse(row.metadata) as { batch: string }).batch;
      batches.set(batch, (batches.get(batch) ?? 0) + 1);
    }
    return { rows: rows.length, digest: createHash('sha256').update(JSON.stringify(rows)).digest('hex'), batches };
  } finally {
    db.close();
  }
}

const BATCH = 20;

async function postBatch(port: number, key: string): Promise<number> {
  const batch = randomUUID();
  const events = Array.from({ length: BATCH }, (_, i) => ({
    eventType: 'ticket.resolved',
    category: 'TASK_UPDATE',
    actor: { externalId: `b-${i % 5}` },
    metadata: { batch },
  }));
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/ingest/events`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ events }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe(`Backup and restore: ingestctl backup / restore (${testDialect})`, () => {
  it('takes a consistent online backup under load, refuses to restore while the server runs, then restores it', async function () {
    if (testDialect !== 'sqlite') this.skip();
    this.timeout(120_000);
    const dbConfig = await freshDatabaseConfig();
    const env = { DATABASE_URL: databaseUrlOf(dbConfig), RATE_LIMIT_PER_KEY: '100000', RATE_LIMIT_PER_ORG: '100000' };
    const { key } = JSON.parse((await ingestctl(env, 'quickstart', '--json')).out) as { key: string };
    const backupFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'ingest-backup-')), 'backup.db');
    const server = await startServer(env);
    let stopped = false;
    try {
      let sent = 0;
      const load = Array.from({ length: 4 }, async () => {
        while (!stopped) {
          assert.equal(await postBatch(server.port, key), 202);
          sent++;
        }
      });
      while (sent < 20) await new Promise((resolve) => setTimeout(resolve, 20));
      const backup = await ingestctl(env, 'backup', '--to', backupFile, '--json');
      assert.equal(backup.code, 0, backup.err);
      assert.equal(JSON.parse(backup.out).file, backupFile);
      const sentAtBackup = sent;
      while (sent < sentAtBackup + 20) await new Promise((resolve) => setTimeout(resolve, 20));
      stopped = true;
      await Promise.all(load);

      const copy = timelineDigest(backupFile);
      assert.ok(copy.rows >= 20 * BATCH, `the backup holds what was acknowledged before it (${copy.rows} rows)`);
      for (const [batch, count] of copy.batches) assert.equal(count, BATCH, `batch ${batch} is whole in the backup`);
      const integrity = new SqliteDatabase(backupFile, { readonly: true });
      assert.equal(integrity.pragma('integrity_check', { simple: true }), 'ok');
      integrity.close();

      const refused = await ingestctl(env, 'restore', '--from', backupFile);
      assert.equal(refused.code, 1);
      assert.match(refused.err, /in use by another process/);
      assert.ok(timelineDigest(dbConfig.kind === 'sqlite' ? dbConfig.path : '').rows > copy.rows, 'the database was left alone');
    } finally {
      stopped = true;
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
    }

    const file = dbConfig.kind === 'sqlite' ? dbConfig.path : '';
    const restored = await ingestctl(env, 'restore', '--from', backupFile, '--json');
    assert.equal(restored.code, 0, restored.err);
    assert.deepEqual(JSON.parse(restored.out).migrations, migrationNames());
    for (const suffix of ['-wal', '-shm']) assert.ok(!existsSync(`${file}${suffix}`), `no stale ${suffix} beside the restored file`);
    const after = timelineDigest(file);
    const copy = timelineDigest(backupFile);
    assert.equal(after.rows, copy.rows);
    assert.equal(after.digest, copy.digest, 'the restored timeline is the backup, row for row');

    const again = await startServer(env);
    try {
      assert.equal(await postBatch(again.port, key), 202, 'the service runs on the restored database');
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });

  it('refuses to restore a file that is not a backup of this service', async function () {
    if (testDialect !== 'sqlite') this.skip();
    const dbConfig = await freshDatabaseConfig();
    const env = { DATABASE_URL: databaseUrlOf(dbConfig) };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ingest-restore-'));
    const text = path.join(dir, 'notes.txt');
    writeFileSync(text, 'this is not a database, just some text long enough to have a header..........................');
    const foreign = path.join(dir, 'foreign.db');
    new SqliteDatabase(foreign).exec('create table t (x)');
    const newer = path.join(dir, 'newer.db');
    const newerDb = new SqliteDatabase(newer);
    newerDb.exec(
      "create table kysely_migration (name text, timestamp text); insert into kysely_migration values ('001_initial', ''), ('999_future', '')",
    );
    newerDb.close();

    const cases: Array<[string, RegExp]> = [
      [path.join(dir, 'missing.db'), /does not exist/],
      [text, /not a SQLite database/],
      [foreign, /not a database of this service/],
      [newer, /newer version of the service \(migrations 999_future\)/],
    ];
    for (const [from, message] of cases) {
      const result = await ingestctl(env, 'restore', '--from', from);
      assert.equal(result.code, 1, from);
      assert.match(result.err, message);
    }
  });

  it('refuses a second server on the same SQLite database', async function () {
    if (testDialect !== 'sqlite') this.skip();
    this.timeout(60_000);
    const env = { DATABASE_URL: databaseUrlOf(await freshDatabaseConfig()) };
    const first = await startServer(env);
    try {
      await assert.rejects(startServer(env), /in use by another process/);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });

  it('points to pg_dump and pg_restore on PostgreSQL', async function () {
    if (testDialect !== 'postgres') this.skip();
    const env = { DATABASE_URL: databaseUrlOf(await freshDatabaseConfig()) };
    const backup = await ingestctl(env, 'backup', '--to', '/tmp/never.db');
    assert.equal(backup.code, 1);
    assert.match(backup.err, /for PostgreSQL use pg_dump/);
    const restore = await ingestctl(env, 'restore', '--from', '/tmp/never.db');
    assert.equal(restore.code, 1);
    assert.match(restore.err, /for PostgreSQL use pg_restore/);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { DatabaseConfig } from '../../src/config';
import { migrate, openDatabase, type Db } from '../../src/data/db';

/** Which database this run of the suite uses: `TEST_DATABASE=sqlite` (default) or `postgres`. */
export const testDialect = process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
export const testPostgresUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const schemasCreated: string[] = [];

/** A fresh, migrated, empty database: a temporary SQLite file, or a new PostgreSQL schema. */
export async function freshDatabaseConfig(): Promise<DatabaseConfig> {
  if (testDialect === 'sqlite') {
    return { kind: 'sqlite', path: path.join(mkdtempSync(path.join(os.tmpdir(), 'ingest-test-')), 'ingest.db') };
  }
  const schema = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const client = new Client({ connectionString: testPostgresUrl });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  schemasCreated.push(schema);
  const url = new URL(testPostgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { kind: 'postgres', url: url.toString() };
}

export async function freshDatabase(): Promise<{ db: Db; config: DatabaseConfig }> {
  const config = await freshDatabaseConfig();
  const db = openDatabase(config);
  await migrate(db);
  return { db, config };
}

let shared: Promise<{ db: Db; config: DatabaseConfig }> | undefined;

/** One database for the whole run; tests stay apart by creating their own organizations. */
export function sharedDatabase(): Promise<{ db: Db; config: DatabaseConfig }> {
  shared ??= freshDatabase();
  return shared;
}

export async function dropTestSchemas(): Promise<void> {
  if (shared) await (await shared).db.close();
  if (schemasCreated.length === 0) return;
  const client = new Client({ connectionString: testPostgresUrl });
  await client.connect();
  for (const schema of schemasCreated) await client.query(`drop schema if exists ${schema} cascade`);
  await client.end();
}

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, sql, PostgresDialect, SqliteDialect, type Migration } from 'kysely';
import { Pool } from 'pg';
import type { DatabaseConfig } from '../config';
import * as initial from './migrations/001_initial';
import type { Database } from './schema';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

const migrations: Record<string, Migration> = {
  '001_initial': initial,
};

/** Opens the configured database (creating a SQLite file and its folder on first start). */
export function openDatabase(config: DatabaseConfig): Db {
  if (config.kind === 'sqlite') {
    if (config.path !== ':memory:') mkdirSync(path.dirname(path.resolve(config.path)), { recursive: true });
    const sqlite = new SqliteDatabase(config.path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    return { kysely, dialect: 'sqlite', close: () => kysely.destroy() };
  }
  const pool = new Pool({ connectionString: config.url, max: 10, connectionTimeoutMillis: 5000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { kysely, dialect: 'postgres', close: () => kysely.destroy() };
}

/** Applies pending migrations; the same set serves both dialects. */
export async function migrate(db: Db): Promise<void> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one:
  // name the connection's own, so databases in separate schemas never see each other's.
  const migrationTableSchema =
    db.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

import type SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, sql, PostgresDialect, SqliteDialect, type KyselyPlugin, type Migration } from 'kysely';
import { Pool } from 'pg';
import type { DatabaseConfig } from '../config';
import * as initial from './migrations/001_initial';
import type { Database } from './schema';
import { openSqlite, withStatementCache } from './sqlite';
import { GroupCommitter, retryingTransaction, type UnitOfWork } from './transaction';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /**
   * Runs `work` atomically: all of it is committed before this resolves, or
   * none of it. Use it, not kysely.transaction(), for request writes.
   */
  transaction<T>(work: UnitOfWork<T>): Promise<T>;
  /** SQLite only: the connection itself, for bulk writes inside transaction() that Kysely makes slow. */
  sqlite?: SqliteDatabase.Database;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Kysely plugins (tests use one to inject failures). */
  plugins?: KyselyPlugin[];
}

const migrations: Record<string, Migration> = {
  '001_initial': initial,
};

/** Opens the configured database (creating a SQLite file and its folder on first start). */
export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Db {
  const plugins = options.plugins ?? [];
  if (config.kind === 'sqlite') {
    const sqlite = openSqlite(config.path);
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite.connection) }), plugins });
    const committer = new GroupCommitter(kysely);
    return {
      kysely,
      dialect: 'sqlite',
      transaction: (work) => committer.run(work),
      sqlite: sqlite.connection,
      close: async () => {
        await sqlite.stopCheckpoints();
        await kysely.destroy();
      },
    };
  }
  // Bounded waits: a database that stops answering fails requests in seconds instead of hanging them.
  const pool = new Pool({ connectionString: config.url, max: 10, connectionTimeoutMillis: 5000, query_timeout: 15_000 });
  // A client losing its connection emits 'error'; unheard, that would crash the process. The
  // query in flight fails on its own and the pool replaces the client, idle or checked out.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins });
  return { kysely, dialect: 'postgres', transaction: (work) => retryingTransaction(kysely, work), close: () => kysely.destroy() };
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

// Connection-level failures (the database is away, not the query wrong): the
// request changed nothing and may be retried.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08001',
  '08003',
  '08006', // connection exceptions
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
]);
const UNAVAILABLE_MESSAGES = /Connection terminated|Query read timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|not queryable/i;

/** Whether a failure means the database could not be reached, rather than a fault of the query. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR'))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}

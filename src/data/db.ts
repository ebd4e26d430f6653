import path from 'node:path';
import { Kysely, Migrator, sql, PostgresDialect, type KyselyPlugin, type LogEvent, type Migration } from 'kysely';
import { Pool } from 'pg';
import type { DatabaseConfig } from '../config';
import type { WriteJobTable } from '../domain/writes';
import { metrics, trackPool } from '../metrics';
import * as initial from './migrations/001_initial';
import * as membersSessions from './migrations/002_members_sessions';
import * as administration from './migrations/004_administration';
import * as consoleRead from './migrations/003_console_read';
import * as rollups from './migrations/005_rollups';
import { clusteredRollups } from './migrations/006_clustered_rollups';
import { outboxSpan } from './migrations/007_outbox_span';
import { dayLists } from './migrations/008_day_lists';
import { rollupFillfactor } from './migrations/009_rollup_fillfactor';
import { dayListTags } from './migrations/010_day_list_tags';
import { eventIdOrder } from './migrations/011_event_id_order';
import { outboxWithoutEventIds } from './migrations/012_outbox_without_event_ids';
import { monthlyUsageSlots } from './migrations/013_monthly_usage_slots';
import { dayListsWithRowid } from './migrations/014_day_lists_with_rowid';
import type { Database } from './schema';
import { withPreparedStatements } from './postgres';
import { openSqlite, sqliteKysely } from './sqlite';
import { GroupCommitter, retryingTransaction, type UnitOfWork } from './transaction';
import { WriterThread, type Writer } from './writer';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  /**
   * Runs `work` atomically: all of it is committed before this resolves, or
   * none of it. Use it, not kysely.transaction(), for request writes.
   */
  transaction<T>(work: UnitOfWork<T>): Promise<T>;
  /**
   * On a SQLite file, the thread that commits the writes made for every batch
   * on a connection of its own (src/data/writer.ts), off the HTTP thread's
   * core; undefined elsewhere: there transaction() runs them (runWrite).
   */
  writer?: Writer<WriteJobTable>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Kysely plugins (tests use one to inject failures); they act on this thread's queries only, so with them there is no writer thread. */
  plugins?: KyselyPlugin[];
}

// The writer thread's entry module, built beside this folder (.js) or run by tsx (.ts).
const WRITER_ENTRY = path.join(__dirname, '..', `writer-thread${path.extname(__filename)}`);

/** The migrations, by name; what one does may depend on the database it runs on. */
function migrationsFor(dialect: Dialect): Record<string, Migration> {
  return {
    '001_initial': initial,
    '002_members_sessions': membersSessions,
    '004_administration': administration,
    '003_console_read': consoleRead,
    '005_rollups': rollups,
    '006_clustered_rollups': clusteredRollups(dialect),
    '007_outbox_span': outboxSpan(dialect),
    '008_day_lists': dayLists(dialect),
    '009_rollup_fillfactor': rollupFillfactor(dialect),
    '010_day_list_tags': dayListTags,
    '011_event_id_order': eventIdOrder(dialect),
    '012_outbox_without_event_ids': outboxWithoutEventIds,
    '013_monthly_usage_slots': monthlyUsageSlots,
    '014_day_lists_with_rowid': dayListsWithRowid(dialect),
  };
}

function timeQuery(event: LogEvent): void {
  metrics.dbQueryDuration.observe({ outcome: event.level === 'query' ? 'ok' : 'error' }, event.queryDurationMillis / 1000);
}

/** Opens the configured database (creating a SQLite file and its folder on first start). */
export function openDatabase(config: DatabaseConfig, options: OpenOptions = {}): Db {
  const plugins = options.plugins ?? [];
  if (config.kind === 'sqlite') {
    const sqlite = openSqlite(config.path);
    const kysely = sqliteKysely(sqlite.connection, { plugins, log: timeQuery });
    const committer = new GroupCommitter(kysely, sqlite.connection);
    // Another thread can open the same file, not the same memory.
    const writer =
      config.path === ':memory:' || plugins.length > 0
        ? undefined
        : new WriterThread<WriteJobTable>(WRITER_ENTRY, path.resolve(config.path));
    return {
      kysely,
      dialect: 'sqlite',
      transaction: (work) => committer.run(work),
      writer,
      close: async () => {
        await writer?.close();
        await sqlite.stopCheckpoints();
        await kysely.destroy();
      },
    };
  }
  // Bounded waits: a database that stops answering fails requests in seconds instead of hanging them. An idle
  // connection is kept a minute (pg's default is 10 s): one closed and opened again costs PostgreSQL a new backend and
  // the ingest statements planned again, and an app's one or two statements at a time leave most of the pool idle at times.
  const pool = new Pool({ connectionString: config.url, max: 10, idleTimeoutMillis: 60_000, connectionTimeoutMillis: 5000, query_timeout: 15_000 });
  // A client losing its connection emits 'error'; unheard, that would crash the process. The
  // query in flight fails on its own and the pool replaces the client, idle or checked out.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withPreparedStatements(pool) }), plugins, log: timeQuery });
  const untrack = trackPool(() => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }));
  return {
    kysely,
    dialect: 'postgres',
    transaction: (work) => retryingTransaction(kysely, work),
    close: async () => {
      untrack();
      await kysely.destroy();
    },
  };
}

/** Every migration this version of the service knows, in order. */
export function migrationNames(): string[] {
  return Object.keys(migrationsFor('sqlite')).sort();
}

function migratorFor(db: Db, migrationTableSchema: string | undefined, disableTransactions = false): Migrator {
  return new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrationsFor(db.dialect) },
    migrationTableSchema,
    disableTransactions,
  });
}

/**
 * Applies pending migrations; the same set serves both dialects. Safe to run
 * from several processes at once (instances starting together, ingestctl
 * beside a server): one migrates, the others wait and then find nothing to do.
 * `upTo`: only the migrations up to that one (a test of the next).
 */
export async function migrate(db: Db, upTo?: string): Promise<void> {
  const apply = (migrator: Migrator) => (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo));
  if (db.dialect === 'postgres') {
    // Kysely's PostgreSQL adapter holds an advisory lock around reading what is done and applying the rest.
    const { error } = await apply(migratorFor(db, await migrationSchema(db)));
    if (error) throw error;
    return;
  }
  // Kysely takes no lock on SQLite, and its deferred transaction, having read the migration state,
  // fails (SQLITE_BUSY_SNAPSHOT) if another process migrated meanwhile. The write lock taken first,
  // the others wait on busy_timeout and read the state only after this one committed.
  await sql`begin immediate`.execute(db.kysely);
  let outcome;
  try {
    outcome = await apply(migratorFor(db, undefined, true));
  } catch (err) {
    outcome = { error: err };
  }
  await sql.raw(outcome.error ? 'rollback' : 'commit').execute(db.kysely);
  if (outcome.error) throw outcome.error;
}

/** The names of migrations not yet applied to this database (for /readyz). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const known = await migratorFor(db, await migrationSchema(db)).getMigrations();
  return known.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

async function migrationSchema(db: Db): Promise<string | undefined> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one:
  // name the connection's own, so databases in separate schemas never see each other's.
  if (db.dialect === 'sqlite') return undefined;
  return (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0]?.schema;
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
  'WRITER_EXITED', // src/data/writer.ts
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
]);
const UNAVAILABLE_MESSAGES = /Connection terminated|Query read timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|not queryable/i;

/** Whether PostgreSQL refused a value the statement read or made (SQLSTATE class 22, data exception). */
export function isDataException(err: unknown): boolean {
  const { code } = (err ?? {}) as { code?: unknown };
  return typeof code === 'string' && code.startsWith('22');
}

/** Whether a failure means the database could not be reached, rather than a fault of the query. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR'))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message);
}

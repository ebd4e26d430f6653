import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type KyselyConfig,
  type SqliteDatabase as KyselySqliteDatabase,
  type SqliteDialectConfig,
  type SqliteStatement,
  type Transaction,
} from 'kysely';
import type { Database, Executor } from './schema';

// Checkpoints copy the WAL back into the database file and sync it; done by the
// writing connection they stall whichever request happens to cross the
// threshold (seconds, measured). A background thread with its own connection
// does them instead; the writer's own threshold stays only as a backstop
// (without it the writer spent more CPU per event, measured).
//
// Small and often, because a checkpoint's sync stalls the writer's commits meanwhile (most likely ext4 committing
// its journal, which the commit's write to the WAL then waits for): the more it has to sync, the longer. Every 25 ms
// took make bench's p99 from 155-187 ms to 82-83 against every 250 ms (2026-11-24). While commits come, one right
// after the other (every millisecond): in quick SQLite runs with the growth runs (2026-12-07), the writer's commits
// that waited over 40 ms after their work 0-2 a run against 4-27 every 25 ms and 31-38 every 100 ms, and p99
// 52.6-81.8 ms in the six runs against 73.9-144.4 in 36 every 25 ms, the server's CPU per event at the same ratio
// to the raw driver's (1.36x against 1.26-1.47x). Until a second after the last commit; then, idle, every 25 ms.
const CHECKPOINT_CADENCE: CheckpointCadence = { busyMs: 1, busyForMs: 1000, idleMs: 25 };
const BACKSTOP_AUTOCHECKPOINT_PAGES = 50_000;
// Per connection, and filled once millions of events are stored: then 32 MB took the process's peak RSS to 248 MB,
// 16 to 231 (the writer's young generation at 12 MB both times), ingest at 0.93 and 0.95x an empty store (make
// bench, 2026-11-27). The pages an insert touches fit; the OS's cache keeps the rest.
const CACHE_SIZE_KIB = 16 * 1024;

/** How often the background thread checkpoints: every busyMs until busyForMs after the last commit it saw, then every idleMs. */
export interface CheckpointCadence {
  busyMs: number;
  busyForMs: number;
  idleMs: number;
}

/**
 * When the background thread checkpoints next, `sinceCommitMs` after it last saw another connection's commit
 * (its connection's data_version changed). Runs in that thread, from its source text: it refers to nothing outside itself.
 */
export function nextCheckpointInMs(sinceCommitMs: number, { busyMs, busyForMs, idleMs }: CheckpointCadence): number {
  return sinceCommitMs < busyForMs ? busyMs : idleMs;
}

const checkpointerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 1000');
const nextCheckpointInMs = ${nextCheckpointInMs.toString()};
let version = db.pragma('data_version', { simple: true });
let committedAt = -Infinity;
let timer;
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    const now = db.pragma('data_version', { simple: true });
    if (now !== version) committedAt = performance.now();
    version = now;
  } catch { /* busy now: the next round will do */ }
  timer = setTimeout(checkpoint, nextCheckpointInMs(performance.now() - committedAt, workerData.cadence));
};
timer = setTimeout(checkpoint, workerData.cadence.idleMs);
parentPort.once('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

export interface SqliteConnection {
  connection: SqliteDatabase.Database;
  /** Stops the background checkpoints; call before closing the connection. */
  stopCheckpoints(): Promise<void>;
}

/**
 * Opens (creating on first use) a SQLite file in WAL mode with its checkpoints
 * done off the request path, unless `checkpoints` is false (a second
 * connection of a process whose first one has them done).
 */
export function openSqlite(file: string, { checkpoints = true } = {}): SqliteConnection {
  const inMemory = file === ':memory:';
  if (!inMemory) mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const connection = new SqliteDatabase(file);
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  connection.pragma(`cache_size = -${CACHE_SIZE_KIB}`);
  if (inMemory) return { connection, stopCheckpoints: async () => {} };
  // Every writing connection: SQLite's default (1,000 pages) made the writer thread checkpoint every few commits.
  connection.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  if (!checkpoints) return { connection, stopCheckpoints: async () => {} };

  const checkpointer = new Worker(checkpointerSource, {
    eval: true,
    workerData: { driver: require.resolve('better-sqlite3'), path: path.resolve(file), cadence: CHECKPOINT_CADENCE },
  });
  checkpointer.unref();
  return {
    connection,
    stopCheckpoints: async () => {
      // Unreferenced, the thread would not keep the process alive long enough to hear it stop.
      checkpointer.ref();
      const stopped = new Promise((resolve) => checkpointer.once('exit', resolve));
      checkpointer.postMessage('stop');
      await stopped;
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * The connection as Kysely sees it, with prepared statements kept by SQL text:
 * Kysely prepares every query anew, which costs more than running it for the
 * batch insert (measured). Least recently used statements are dropped first.
 */
function withStatementCache(connection: SqliteDatabase.Database): KyselySqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => connection.close(),
    prepare: (sql: string) => {
      let statement = statements.get(sql);
      if (statement) {
        statements.delete(sql);
      } else {
        statement = connection.prepare(sql) as unknown as SqliteStatement;
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string);
      }
      statements.set(sql, statement);
      return statement;
    },
  };
}

const preparedOn = new WeakMap<SqliteDatabase.Database, Map<string, SqliteDatabase.Statement>>();

/** A statement of the service's own fixed text, prepared once per connection: for the statements run once per row. */
export function preparedStatement(connection: SqliteDatabase.Database, text: string): SqliteDatabase.Statement {
  let statements = preparedOn.get(connection);
  if (!statements) preparedOn.set(connection, (statements = new Map()));
  let statement = statements.get(text);
  if (!statement) statements.set(text, (statement = connection.prepare(text)));
  return statement;
}

/**
 * Kysely over one connection, its transactions begun IMMEDIATE: a process has
 * two writing connections (the writer thread's and the main thread's, see
 * src/data/writer.ts), and a deferred transaction that read before writing
 * fails at once (SQLITE_BUSY_SNAPSHOT) when the other committed meanwhile,
 * where one that takes the write lock first waits on busy_timeout.
 */
export function sqliteKysely(connection: SqliteDatabase.Database, config: Omit<KyselyConfig, 'dialect'>): Kysely<Database> {
  return new Kysely<Database>({ ...config, dialect: new ImmediateSqliteDialect({ database: withStatementCache(connection) }) });
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly settings: SqliteDialectConfig) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

const connectionOfTransaction = new WeakMap<Executor, SqliteDatabase.Database>();

/** Records that `trx` runs on `connection` (SQLite has one connection, so one transaction at a time). */
export function bindConnection(trx: Transaction<Database>, connection: SqliteDatabase.Database): void {
  connectionOfTransaction.set(trx, connection);
}

/**
 * The SQLite connection a transaction of Db.transaction() runs on, for the
 * statements Kysely makes slow; undefined on PostgreSQL.
 */
export function sqliteConnectionOf(db: Executor): SqliteDatabase.Database | undefined {
  return connectionOfTransaction.get(db);
}

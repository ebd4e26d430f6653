import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import type { SqliteDatabase as KyselySqliteDatabase, SqliteStatement, Transaction } from 'kysely';
import type { Database } from './schema';

// Checkpoints copy the WAL back into the database file and sync it; done by the
// writing connection they stall whichever request happens to cross the
// threshold (seconds, measured). A background thread with its own connection
// does them instead; the writer's own threshold stays only as a backstop.
const CHECKPOINT_EVERY_MS = 250;
const BACKSTOP_AUTOCHECKPOINT_PAGES = 50_000;
const CACHE_SIZE_KIB = 32 * 1024;

const checkpointerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy now: the next round will do */ }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface SqliteConnection {
  connection: SqliteDatabase.Database;
  /** Stops the background checkpoints; call before closing the connection. */
  stopCheckpoints(): Promise<void>;
}

/** Opens (creating on first use) a SQLite file in WAL mode with its checkpoints done off the request path. */
export function openSqlite(file: string): SqliteConnection {
  const inMemory = file === ':memory:';
  if (!inMemory) mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const connection = new SqliteDatabase(file);
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  connection.pragma(`cache_size = -${CACHE_SIZE_KIB}`);
  if (inMemory) return { connection, stopCheckpoints: async () => {} };

  connection.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  const checkpointer = new Worker(checkpointerSource, {
    eval: true,
    workerData: { driver: require.resolve('better-sqlite3'), path: path.resolve(file), everyMs: CHECKPOINT_EVERY_MS },
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
export function withStatementCache(connection: SqliteDatabase.Database): KyselySqliteDatabase {
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

const connectionOfTransaction = new WeakMap<Transaction<Database>, SqliteDatabase.Database>();

/** Records that `trx` runs on `connection` (SQLite has one connection, so one transaction at a time). */
export function bindConnection(trx: Transaction<Database>, connection: SqliteDatabase.Database): void {
  connectionOfTransaction.set(trx, connection);
}

/**
 * The SQLite connection a transaction of Db.transaction() runs on, for the
 * statements Kysely makes slow; undefined on PostgreSQL.
 */
export function sqliteConnectionOf(trx: Transaction<Database>): SqliteDatabase.Database | undefined {
  return connectionOfTransaction.get(trx);
}

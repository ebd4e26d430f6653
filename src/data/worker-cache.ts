import type SqliteDatabase from 'better-sqlite3';
import type { Executor } from './schema';
import { sqliteConnectionOf } from './sqlite';
import type { WorkerRef } from './workers';

// Entries kept at most, about 200 bytes each: a few MB of the writer thread's heap. Past it the cache starts over.
const MAX_ENTRIES = 20_000;

/**
 * SQLite's writer thread: the workers its connection has read for actors, by
 * workerId and by externalId. Looking up a batch's 100 externalIds took the
 * thread 460 µs, an eighth of its statements' time under make bench's load
 * (measured), and the same people send again and again. An entry stays true
 * while no other connection commits: the writer's own transactions only add
 * workers and links (and delete only workers they created, never read), and
 * every transaction of the writer begins by asking SQLite whether another
 * connection (the HTTP thread's, another process's) committed since
 * (`PRAGMA data_version`), forgetting everything if one did. Holding the write
 * lock, no other commit comes until it ends. A transaction that rolls back
 * may have taught entries of its own rows: they are forgotten too.
 */
export class WorkerCache {
  // By scope, then key: a key joined to its scope was a new string to hash at every look-up, 1.7 % of the thread
  // (profiled); 23-47 µs a batch of 100 keys against 6-8 (measured in a loop).
  private readonly scopes = new Map<string, Map<string, WorkerRef>>();
  private size = 0;
  private version: unknown;
  // Prepared once: connection.pragma() prepares its statement anew each time, 66 µs (measured).
  private readonly dataVersion: SqliteDatabase.Statement;

  /** The cache of `connection`: the look-ups of every transaction bound to it (bindConnection) use it. */
  constructor(connection: SqliteDatabase.Database) {
    this.dataVersion = connection.prepare('pragma data_version').pluck();
    cacheOn.set(connection, this);
  }

  /** Call first in each transaction, holding the write lock. */
  begin(): void {
    const version: unknown = this.dataVersion.get();
    if (version !== this.version) this.forget();
    this.version = version;
  }

  /** Forgets every worker: the transaction rolled back (what it read may be gone with it), or another connection committed. */
  forget(): void {
    this.scopes.clear();
    this.size = 0;
  }

  /**
   * The workers of `keys` (within `scope`, an organization or an app): those
   * known here, and those `load` reads of the rest, known from now on.
   */
  async lookup(scope: string, keys: string[], load: (keys: string[]) => Promise<Map<string, WorkerRef>>): Promise<Map<string, WorkerRef>> {
    const found = new Map<string, WorkerRef>();
    const missing: string[] = [];
    const known = this.scopes.get(scope);
    for (const key of keys) {
      const worker = known?.get(key);
      if (worker) found.set(key, worker);
      else missing.push(key);
    }
    if (missing.length === 0) return found;
    const loaded = await load(missing);
    if (this.size + loaded.size > MAX_ENTRIES) this.forget();
    let learning = this.scopes.get(scope);
    if (!learning) this.scopes.set(scope, (learning = new Map()));
    for (const [key, worker] of loaded) {
      found.set(key, worker);
      if (!learning.has(key)) this.size += 1;
      learning.set(key, worker);
    }
    return found;
  }
}

const cacheOn = new WeakMap<SqliteDatabase.Database, WorkerCache>();

/** The worker cache of the transaction `db`, when it runs on the connection of SQLite's writer thread. */
export function workerCacheOf(db: Executor): WorkerCache | undefined {
  const connection = sqliteConnectionOf(db);
  return connection && cacheOn.get(connection);
}

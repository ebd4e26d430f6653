import type SqliteDatabase from 'better-sqlite3';
import type { Executor } from './schema';
import type { WorkerRef } from './workers';

// Entries kept at most, the oldest dropped first: about 200 bytes each, a few MB of the writer thread's heap.
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
  private readonly entries = new Map<string, WorkerRef>();
  private version: unknown;
  // Prepared once: connection.pragma() prepares its statement anew each time, 66 µs (measured).
  private readonly dataVersion: SqliteDatabase.Statement;

  constructor(connection: SqliteDatabase.Database) {
    this.dataVersion = connection.prepare('pragma data_version').pluck();
  }

  /** Call first in each transaction, holding the write lock: makes `trx`'s look-ups use the cache. */
  begin(trx: Executor): void {
    const version: unknown = this.dataVersion.get();
    if (version !== this.version) this.entries.clear();
    this.version = version;
    cacheOf.set(trx, this);
  }

  /** The transaction rolled back: what it read may be gone with it. */
  forget(): void {
    this.entries.clear();
  }

  /**
   * The workers of `keys` (within `scope`, an organization or an app): those
   * known here, and those `load` reads of the rest, known from now on.
   */
  async lookup(scope: string, keys: string[], load: (keys: string[]) => Promise<Map<string, WorkerRef>>): Promise<Map<string, WorkerRef>> {
    const found = new Map<string, WorkerRef>();
    const missing: string[] = [];
    for (const key of keys) {
      const worker = this.entries.get(`${scope}\n${key}`);
      if (worker) found.set(key, worker);
      else missing.push(key);
    }
    if (missing.length === 0) return found;
    for (const [key, worker] of await load(missing)) {
      found.set(key, worker);
      this.entries.set(`${scope}\n${key}`, worker);
    }
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.entries.delete(oldest);
    }
    return found;
  }
}

const cacheOf = new WeakMap<Executor, WorkerCache>();

/** The worker cache of the transaction `db`, when it runs in SQLite's writer thread. */
export function workerCacheOf(db: Executor): WorkerCache | undefined {
  return cacheOf.get(db);
}

import type SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema';
import { bindConnection } from './sqlite';
import type { WorkerCache } from './worker-cache';

export type UnitOfWork<T> = (trx: Transaction<Database>) => Promise<T>;

// PostgreSQL aborts one of two transactions that deadlock or fail serialization;
// the whole unit of work is safe to run again because nothing of it was committed.
const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 5;

/** PostgreSQL: each unit of work in its own transaction, retried when the server aborts it for a conflict. */
export function retryingTransaction<T>(kysely: Kysely<Database>, work: UnitOfWork<T>): Promise<T> {
  return retryingConflicts(() => kysely.transaction().execute(work));
}

/** PostgreSQL: runs `attempt` (a transaction, or one statement on its own) again when the server aborts it for a conflict. */
export async function retryingConflicts<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (n >= ATTEMPTS || !code || !RETRYABLE.has(code)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * n));
    }
  }
}

/** Runs `work` in a savepoint of the transaction `trx`: when it fails, its changes alone are undone and the transaction goes on. */
export async function inSavepoint<T>(trx: Transaction<Database>, work: () => Promise<T>): Promise<T> {
  await sql`savepoint unit`.execute(trx);
  try {
    const value = await work();
    await sql`release savepoint unit`.execute(trx);
    return value;
  } catch (error) {
    await sql`rollback to savepoint unit`.execute(trx);
    await sql`release savepoint unit`.execute(trx);
    throw error;
  }
}

interface Pending {
  work: UnitOfWork<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const MAX_GROUP = 64;

/**
 * SQLite group commit. SQLite has one writer, so units of work queue anyway;
 * those that queued while a commit was running, or arrived in the same turn of
 * the event loop, run together in the next transaction and commit once. Every
 * unit is settled only after the commit, so nothing is acknowledged before it
 * is durable. Given the connection under `kysely`, the units can reach it
 * (sqliteConnectionOf); given a WorkerCache, their look-ups of workers use it.
 */
export class GroupCommitter {
  private readonly queue: Pending[] = [];
  private running = false;

  constructor(
    private readonly kysely: Kysely<Database>,
    private readonly connection?: SqliteDatabase.Database,
    private readonly workers?: WorkerCache,
  ) {}

  run<T>(work: UnitOfWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (this.running) return;
      this.running = true;
      // The writer thread's jobs arrive as messages, each handled to its end before the next: started at
      // once, every group held one unit (measured). After the turn's messages, the group holds them all.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) await this.commit(this.queue.splice(0, MAX_GROUP));
    this.running = false;
  }

  /**
   * The group in one transaction, without a savepoint per unit: SQLite copies
   * every page a savepoint's unit changes, which cost the writer thread a fifth
   * of its time (measured). When a unit fails, the transaction is rolled back
   * and each unit runs again in a transaction of its own, so that the failing
   * one fails alone; a unit of work may run again, as on PostgreSQL
   * (retryingTransaction), since nothing of it was committed.
   */
  private async commit(group: Pending[]): Promise<void> {
    let values: unknown[];
    try {
      values = await this.kysely.transaction().execute(async (trx) => {
        if (this.connection) bindConnection(trx, this.connection);
        this.workers?.begin();
        const done: unknown[] = [];
        for (const { work } of group) done.push(await work(trx));
        return done;
      });
    } catch (error) {
      this.workers?.forget();
      const [lone] = group;
      if (group.length === 1 && lone) lone.reject(error);
      else for (const unit of group) await this.commit([unit]);
      return;
    }
    group.forEach((unit, i) => unit.resolve(values[i]));
  }
}

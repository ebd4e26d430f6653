import type SqliteDatabase from 'better-sqlite3';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema';
import { bindConnection } from './sqlite';

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

type Result = { ok: true; value: unknown } | { ok: false; error: unknown };

const MAX_GROUP = 64;

/**
 * SQLite group commit. SQLite has one writer, so units of work queue anyway;
 * those that queued while a commit was running are run together in the next
 * transaction, each inside its own savepoint, and committed once. A unit that
 * fails is rolled back to its savepoint alone; every unit is settled only after
 * the commit, so nothing is acknowledged before it is durable. Given the
 * connection under `kysely`, the units can reach it (sqliteConnectionOf).
 */
export class GroupCommitter {
  private readonly queue: Pending[] = [];
  private running = false;

  constructor(
    private readonly kysely: Kysely<Database>,
    private readonly connection?: SqliteDatabase.Database,
  ) {}

  run<T>(work: UnitOfWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) await this.commit(this.queue.splice(0, MAX_GROUP));
    this.running = false;
  }

  private async commit(group: Pending[]): Promise<void> {
    const results: Result[] = [];
    try {
      await this.kysely.transaction().execute(async (trx) => {
        if (this.connection) bindConnection(trx, this.connection);
        if (group.length === 1) {
          results.push({ ok: true, value: await (group[0] as Pending).work(trx) });
          return;
        }
        for (const { work } of group) {
          try {
            results.push({ ok: true, value: await inSavepoint(trx, () => work(trx)) });
          } catch (error) {
            results.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // The transaction itself failed (or a lone unit did): nothing of the group was committed.
      group.forEach((unit, i) => unit.reject(results[i]?.ok === false ? results[i].error : error));
      return;
    }
    group.forEach((unit, i) => {
      const result = results[i] as Result;
      if (result.ok) unit.resolve(result.value);
      else unit.reject(result.error);
    });
  }
}

import type { Transaction } from 'kysely';
import type { Db } from './db';
import type { Database } from './schema';

// PostgreSQL aborts one of two transactions that deadlock or fail serialization;
// the whole unit of work is safe to run again because nothing of it was committed.
const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 5;

/** Runs `work` in one transaction, retried when PostgreSQL aborts it for a conflict with another. */
export async function inTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.kysely.transaction().execute(work);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= ATTEMPTS || !code || !RETRYABLE.has(code)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}

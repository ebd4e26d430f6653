import type { Db } from '../../src/data/db';

/**
 * The same database, but every transaction starts only after `gate` resolves:
 * a request holds its Idempotency-Key claim, then waits, outside any transaction.
 */
export function gatedTransactions(db: Db, gate: () => Promise<void>): Db {
  return {
    ...db,
    transaction: async (work) => {
      await gate();
      return db.transaction(work);
    },
  };
}

import type { Db } from '../../src/data/db';

/**
 * The same database, but every transaction (and every job of its writer
 * thread) starts only after `gate` resolves: a request holds its
 * Idempotency-Key claim, then waits, outside any transaction.
 */
export function gatedTransactions(db: Db, gate: () => Promise<void>): Db {
  const { writer } = db;
  return {
    ...db,
    transaction: async (work) => {
      await gate();
      return db.transaction(work);
    },
    writer: writer && {
      run: async (name, input) => {
        await gate();
        return writer.run(name, input);
      },
    },
  };
}

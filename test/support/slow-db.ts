import type { Db } from '../../src/data/db';

/**
 * The same database, but every transaction starts only after `gate` resolves:
 * a request holds its Idempotency-Key claim, then waits, outside any transaction.
 */
export function gatedTransactions(db: Db, gate: () => Promise<void>): Db {
  const kysely = new Proxy(db.kysely, {
    get(target, property, receiver) {
      if (property !== 'transaction') {
        // Kysely keeps private fields: its methods must run on the real instance, not the proxy.
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return () => ({
        execute: async <T>(work: Parameters<ReturnType<typeof target.transaction>['execute']>[0]) => {
          await gate();
          return target.transaction().execute(work) as Promise<T>;
        },
      });
    },
  });
  return { ...db, kysely };
}

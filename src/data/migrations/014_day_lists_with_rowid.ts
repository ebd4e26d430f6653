import { type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../db';

/**
 * SQLite: each day's list leaves the table's key. In a WITHOUT ROWID table
 * (migration 008) the whole row is the key, and a list of 1,000 workers is
 * 30 KB of it, spilled onto overflow pages that SQLite reads in full for every
 * key it compares on the way to a day: finding one day's list took 60-70 µs,
 * and a read of every worker finds 30 a statistic (1.7 ms a statement against
 * 0.09 with a rowid, measured on make bench-daily's store). With a rowid the
 * key is a small index of its own, and the list comes last, after the tag
 * and stamp that most reads stop at. The lists are dropped rather than
 * copied, as migration 010 did: the rollups worker lists their days again
 * within seconds, and reads join the rows meanwhile. PostgreSQL keeps a long
 * text out of its index and row already: nothing to do.
 */
export function dayListsWithRowid(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      await db.schema.dropTable('rollup_day_lists').execute();
      await db.schema
        .createTable('rollup_day_lists')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('generation', 'integer', (c) => c.notNull())
        .addColumn('statistic_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('parts', 'text', (c) => c.notNull())
        .addColumn('stamp', 'bigint', (c) => c.notNull())
        .addColumn('tag', 'text', (c) => c.notNull())
        .addColumn('workers', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('rollup_day_lists_pk', ['org_id', 'generation', 'statistic_id', 'day'])
        .execute();
    },
  };
}

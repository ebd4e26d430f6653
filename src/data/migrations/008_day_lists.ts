import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../db';

/**
 * A closed day's workers of one statistic, listed once: the text a read of
 * every worker joins from the day's rows (`rollup_days`), kept with the parts
 * it holds and the organization's count of the day when it was made. A read
 * takes a list only while that count is still the day's (every part added to
 * a day adds to its count, and a day's rows and its list are deleted
 * together), so a list is never stale where it is used; otherwise the read
 * joins the rows, as it did before. Reading 30 days of every worker is 30,000
 * rows a statistic to join into text on every request.
 */
export function dayLists(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let table = db.schema
        .createTable('rollup_day_lists')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('generation', 'integer', (c) => c.notNull())
        .addColumn('statistic_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('parts', 'text', (c) => c.notNull())
        .addColumn('stamp', 'bigint', (c) => c.notNull())
        .addColumn('workers', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('rollup_day_lists_pk', ['org_id', 'generation', 'statistic_id', 'day']);
      // Kept in key order, as the parts tables are (migration 006); on SQLite, until migration 014.
      if (dialect === 'sqlite') table = table.modifyEnd(sql`without rowid`);
      await table.execute();
    },
  };
}

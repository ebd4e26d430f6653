import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Each closed day's list gets a tag, new each time the day is listed: a list
 * is never rewritten under its tag, so a process keeps the lists it parsed by
 * tag (src/data/day-list-cache.ts) and a read of every worker, told in its one
 * statement which tags still hold, reads and parses only the lists it lacks.
 * The lists made before have none and are dropped: the rollups worker lists
 * their days again within seconds, and reads join the rows meanwhile.
 */
export const dayListTags: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await sql`delete from rollup_day_lists`.execute(db);
    // SQLite adds a NOT NULL column only with a default; every list written from now on names its own tag.
    await db.schema
      .alterTable('rollup_day_lists')
      .addColumn('tag', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  },
};

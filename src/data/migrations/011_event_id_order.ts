import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../db';

/**
 * PostgreSQL: event ids compare in code-unit order ("C" collation), as the
 * service and SQLite compare them, whatever the database's default. Then the
 * ids one batch drew together (src/data/ids.ts) are one range of the primary
 * key, which a drain of the rollups reads in order (src/data/rollups.ts); in a
 * language's collation, where "-" and "_" weigh nothing at first, they need
 * not be. The table is not rewritten; its indexes holding id are rebuilt.
 * SQLite compares text by code units already.
 */
export function eventIdOrder(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') await sql`alter table events alter column id type text collate "C"`.execute(db);
    },
  };
}

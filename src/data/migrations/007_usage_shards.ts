import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../db';

/**
 * A month's usage of an organization is counted in several rows (shards), a
 * batch adding to one of them: a batch holds the row it counts in until its
 * commit, and with a single row every batch of an organization committed one
 * after another, each waiting for the previous one's WAL flush (PostgreSQL,
 * measured: 23 of 40 samples of the backends in WALSync, 14 waiting for that
 * lock, about 290 batches a second at most). Existing counts become shard 0.
 */
export function usageShards(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === 'postgres') {
        await sql`alter table monthly_usage add column shard integer not null default 0`.execute(db);
        await sql`alter table monthly_usage drop constraint monthly_usage_pk`.execute(db);
        await sql`alter table monthly_usage add constraint monthly_usage_pk primary key (org_id, month, shard)`.execute(db);
        return;
      }
      // SQLite changes no primary key in place: the table is made again.
      await db.schema
        .createTable('monthly_usage_sharded')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('shard', 'integer', (c) => c.notNull())
        .addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('monthly_usage_sharded_pk', ['org_id', 'month', 'shard'])
        .execute();
      await sql`insert into monthly_usage_sharded (org_id, month, shard, event_count) select org_id, month, 0, event_count from monthly_usage`.execute(db);
      await db.schema.dropTable('monthly_usage').execute();
      await db.schema.alterTable('monthly_usage_sharded').renameTo('monthly_usage').execute();
    },
  };
}

import { sql, type Kysely, type Migration } from 'kysely';

/**
 * A month's usage of an organization is kept in rows by slot (src/data/usage.ts):
 * the primary key takes the slot, and the rows there were become slot 0, where
 * reservations under a quota count. The table is made anew, as SQLite changes a
 * primary key.
 */
export const usageSlots: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('monthly_usage_slots')
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('slot', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('monthly_usage_slot_pk', ['org_id', 'month', 'slot'])
      .execute();
    await sql`insert into monthly_usage_slots (org_id, month, slot, event_count) select org_id, month, 0, event_count from monthly_usage`.execute(db);
    await db.schema.dropTable('monthly_usage').execute();
    await db.schema.alterTable('monthly_usage_slots').renameTo('monthly_usage').execute();
  },
};

import { type Kysely, type Migration } from 'kysely';

/**
 * The counts of an organization's month spread over slots beside its
 * monthly_usage row (src/data/usage.ts). monthly_usage stays as it was, so
 * that instances of the previous version go on counting there during a
 * rolling upgrade.
 */
export const monthlyUsageSlots: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('monthly_usage_slots')
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('month', 'text', (c) => c.notNull())
      .addColumn('slot', 'integer', (c) => c.notNull())
      .addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('monthly_usage_slots_pk', ['org_id', 'month', 'slot'])
      .execute();
  },
};

import { type Kysely, type Migration } from 'kysely';

/**
 * The outbox no longer lists each batch's event ids: the rollups find a
 * batch's events by its id alone (src/data/rollups.ts, inBatches), so ingest
 * stops writing a list a hundred ids long with every batch.
 */
export const outboxWithoutEventIds: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('rollup_outbox').dropColumn('event_ids').execute();
  },
};

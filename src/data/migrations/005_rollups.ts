import { sql, type Kysely } from 'kysely';

/**
 * Daily rollups (README, "Daily rollups"): parts per statistic, worker, day
 * and pillar, kept in generations so that a recompute never mixes with the
 * rollups that answer meanwhile.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // The batch an event came in: a recompute leaves to the outbox the batches still in it.
  // No index: it is only read beside rows found through another index.
  await db.schema.alterTable('events').addColumn('batch_id', 'text').execute();

  // One row per committed batch of events, written in the ingest transaction; the rollups worker
  // takes it, adds the batch to the rollups and removes it (or marks it applied during a recompute).
  await db.schema
    .createTable('rollup_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('event_ids', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('applied_generation', 'integer')
    .execute();
  await db.schema.createIndex('rollup_outbox_pending').on('rollup_outbox').columns(['applied_generation', 'id']).execute();
  await db.schema.createIndex('rollup_outbox_org').on('rollup_outbox').columns(['org_id', 'applied_generation', 'created_at']).execute();

  // Per organization: the generation that answers, and the one being recomputed, with its lease.
  await db.schema
    .createTable('rollup_state')
    .addColumn('org_id', 'text', (c) => c.primaryKey())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('frozen_at', 'text')
    .addColumn('frozen_statistics', 'text')
    .addColumn('target_generation', 'integer')
    .addColumn('target_time_zone', 'text')
    .addColumn('scan_ts', 'text')
    .addColumn('scan_id', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .execute();

  // Parts per (generation, statistic, day, worker, pillar); days first in the key, so that a
  // range of days of one statistic over every worker (the ranking of workers) is one index range.
  await db.schema
    .createTable('rollup_days')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('statistic_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('pillar', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('sum', sql`double precision`, (c) => c.notNull())
    .addColumn('numerator', sql`double precision`, (c) => c.notNull())
    .addColumn('denominator', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rollup_days_pk', ['org_id', 'generation', 'statistic_id', 'day', 'worker_id', 'pillar'])
    .execute();
  // The same parts summed over workers, kept beside: the organization's series reads a row per day.
  await db.schema
    .createTable('rollup_org_days')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('statistic_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('pillar', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('sum', sql`double precision`, (c) => c.notNull())
    .addColumn('numerator', sql`double precision`, (c) => c.notNull())
    .addColumn('denominator', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rollup_org_days_pk', ['org_id', 'generation', 'statistic_id', 'day', 'pillar'])
    .execute();
}

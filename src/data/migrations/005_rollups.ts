import { sql, type CreateTableBuilder, type Expression, type Kysely } from 'kysely';

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
  await createPartsTable(db, 'rollup_days', { perWorker: true });
  // The same parts summed over workers, kept beside: the organization's series reads a row per day.
  await createPartsTable(db, 'rollup_org_days', { perWorker: false });
}

function partsKey(perWorker: boolean): string[] {
  return ['org_id', 'generation', 'statistic_id', 'day', ...(perWorker ? ['worker_id'] : []), 'pillar'];
}

/** The columns of a table of parts, in order: its key (with worker_id or without), then the parts. */
export function partsColumns(perWorker: boolean): string[] {
  return [...partsKey(perWorker), 'count', 'sum', 'numerator', 'denominator'];
}

const columnTypes: Record<string, 'integer' | Expression<unknown>> = {
  generation: 'integer',
  count: 'integer',
  sum: sql`double precision`,
  numerator: sql`double precision`,
  denominator: 'integer',
};

/** A table of parts; `clustered` (SQLite only): its rows kept in key order, WITHOUT ROWID. */
export async function createPartsTable(
  db: Kysely<unknown>,
  name: string,
  options: { perWorker: boolean; clustered?: boolean },
): Promise<void> {
  let table: CreateTableBuilder<string, string> = db.schema.createTable(name);
  for (const column of partsColumns(options.perWorker)) table = table.addColumn(column, columnTypes[column] ?? 'text', (c) => c.notNull());
  table = table.addPrimaryKeyConstraint(`${name}_pk`, partsKey(options.perWorker));
  if (options.clustered) table = table.modifyEnd(sql`without rowid`);
  await table.execute();
}

import { sql } from 'kysely';
import type { Schema } from '../contract/types';
import type { Dialect } from './db';
import type { Executor, RollupOutboxTable, RollupParts, RollupStateTable } from './schema';

export type Definition = Schema<'StoredStatisticDefinition'>;

/** An app of the organization with its manifest, apps by slug. */
export interface AppManifest {
  app: { id: string; slug: string; name: string };
  definitions: Definition[];
}

/** A row of parts to add to a generation. */
export interface PartsRow extends RollupParts {
  statisticId: string;
  workerId: string;
  day: string;
  pillar: string;
}

/** The stored event as the rollups read it. */
export interface StoredEvent {
  id: string;
  batch_id: string | null;
  app_id: string;
  worker_id: string;
  ts: string;
  event_type: string;
  category: string | null;
  statistic_id: string | null;
  duration: number | null;
  pillar: string | null;
  metadata: string | null;
}

const eventFields = ['id', 'batch_id', 'app_id', 'worker_id', 'ts', 'event_type', 'category', 'statistic_id', 'duration', 'pillar', 'metadata'] as const;

/** Written in the ingest transaction: the batch waits here until the rollups worker adds it. */
export async function insertOutbox(db: Executor, batch: { id: string; orgId: string; appId: string; eventIds: string[] }): Promise<void> {
  await db
    .insertInto('rollup_outbox')
    .values({
      id: batch.id,
      org_id: batch.orgId,
      app_id: batch.appId,
      event_ids: JSON.stringify(batch.eventIds),
      created_at: new Date().toISOString(),
      applied_generation: null,
    })
    .execute();
}

/**
 * Waiting batches, oldest first, locked for this transaction. On PostgreSQL
 * rows another instance holds are skipped, so instances share the work and
 * none takes a batch twice; SQLite serves one process, whose transactions
 * run one at a time.
 */
export async function claimOutbox(db: Executor, dialect: Dialect, limit: number): Promise<RollupOutboxTable[]> {
  const query = db.selectFrom('rollup_outbox').selectAll().where('applied_generation', 'is', null).orderBy('id').limit(limit);
  return dialect === 'postgres' ? query.forUpdate().skipLocked().execute() : query.execute();
}

export async function deleteOutbox(db: Executor, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('rollup_outbox').where('id', 'in', ids).execute();
}

/** Batches added to a generation under recompute stay, so that its scan of the events leaves them out. */
export async function markOutboxApplied(db: Executor, ids: string[], generation: number): Promise<void> {
  if (ids.length > 0) await db.updateTable('rollup_outbox').set({ applied_generation: generation }).where('id', 'in', ids).execute();
}

/** The creation time of the organization's oldest batch not yet in the rollups. */
export async function oldestWaiting(db: Executor, orgId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('rollup_outbox')
    .select((eb) => eb.fn.min('created_at').as('oldest'))
    .where('org_id', '=', orgId)
    .where('applied_generation', 'is', null)
    .executeTakeFirst();
  return row?.oldest ?? undefined;
}

export async function eventsByIds(db: Executor, ids: string[]): Promise<StoredEvent[]> {
  const rows: StoredEvent[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    rows.push(...(await db.selectFrom('events').select(eventFields).where('id', 'in', ids.slice(i, i + 500)).execute()));
  }
  return rows;
}

/**
 * The organization's events after (`ts`, `id`), in that order, leaving out
 * those of batches still in the outbox (waiting, or already added to
 * `generation`): the outbox adds those.
 */
export async function scanEvents(
  db: Executor,
  orgId: string,
  after: { ts: string; id: string } | undefined,
  generation: number,
  limit: number,
): Promise<StoredEvent[]> {
  let query = db
    .selectFrom('events as e')
    .select(eventFields.map((f) => `e.${f}` as const))
    .where('e.org_id', '=', orgId)
    .where('e.kind', '=', 'event')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('rollup_outbox as o')
            .select('o.id')
            .whereRef('o.id', '=', 'e.batch_id')
            .where((o) => o.or([o('o.applied_generation', 'is', null), o('o.applied_generation', '=', generation)])),
        ),
      ),
    )
    .orderBy('e.ts')
    .orderBy('e.id')
    .limit(limit);
  // A row-value comparison: both databases read it as one range of the (org_id, ts, id) index.
  if (after) query = query.where((eb) => eb(eb.refTuple('e.ts', 'e.id'), '>', eb.tuple(after.ts, after.id)));
  return query.execute();
}

/** Every app of the organization with its manifest, by slug. */
export async function manifestsOfOrg(db: Executor, orgId: string): Promise<AppManifest[]> {
  const rows = await db
    .selectFrom('apps as a')
    .leftJoin('statistic_manifests as m', 'm.app_id', 'a.id')
    .select(['a.id', 'a.slug', 'a.name', 'm.definitions'])
    .where('a.org_id', '=', orgId)
    .orderBy('a.slug')
    .execute();
  return rows.map((r) => ({
    app: { id: r.id, slug: r.slug, name: r.name },
    definitions: r.definitions ? (JSON.parse(r.definitions) as Definition[]) : [],
  }));
}

/**
 * The organization's rollup state, created on first need (generation 1 in
 * the organization's zone). `lock`: 'share' (adding batches, several at
 * once) or 'update' (advancing or ending a recompute); PostgreSQL only.
 */
export async function stateFor(
  db: Executor,
  orgId: string,
  lock?: { dialect: Dialect; mode: 'share' | 'update' },
): Promise<RollupStateTable> {
  await db
    .insertInto('rollup_state')
    .columns(['org_id', 'generation', 'time_zone'])
    .expression((eb) =>
      eb.selectFrom('organizations').select(['id as org_id', sql.lit(1).as('generation'), 'time_zone']).where('id', '=', orgId),
    )
    .onConflict((oc) => oc.column('org_id').doNothing())
    .execute();
  let query = db.selectFrom('rollup_state').selectAll().where('org_id', '=', orgId);
  if (lock?.dialect === 'postgres') query = lock.mode === 'share' ? query.forShare() : query.forUpdate();
  return query.executeTakeFirstOrThrow();
}

/** The state as it is, without creating it. */
export async function readState(db: Executor, orgId: string): Promise<RollupStateTable | undefined> {
  return db.selectFrom('rollup_state').selectAll().where('org_id', '=', orgId).executeTakeFirst();
}

export async function updateState(db: Executor, orgId: string, changes: Partial<Omit<RollupStateTable, 'org_id'>>): Promise<void> {
  await db.updateTable('rollup_state').set(changes).where('org_id', '=', orgId).execute();
}

/** Organizations with a recompute to do whose lease is free, expired or `owner`'s. */
export async function recomputesOpen(db: Executor, owner: string, now: string): Promise<string[]> {
  const rows = await db
    .selectFrom('rollup_state')
    .select('org_id')
    .where('target_generation', 'is not', null)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
    .execute();
  return rows.map((r) => r.org_id);
}

/** Takes the recompute's lease; false when another instance holds it. */
export async function takeLease(db: Executor, orgId: string, owner: string, now: string, until: string): Promise<boolean> {
  const result = await db
    .updateTable('rollup_state')
    .set({ lease_owner: owner, lease_until: until })
    .where('org_id', '=', orgId)
    .where('target_generation', 'is not', null)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now), eb('lease_owner', '=', owner)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

const UPSERT_ROWS = 500;

/**
 * Adds parts to a generation's rows (and the organization's, summed over
 * workers), keys in sorted order so that concurrent writers lock rows in the
 * same order. On PostgreSQL one statement per table over column arrays
 * (unnest): a fixed text the server plans once, whatever the number of rows.
 */
export async function addParts(db: Executor, dialect: Dialect, orgId: string, generation: number, rows: PartsRow[]): Promise<void> {
  const orgRows = new Map<string, PartsRow>();
  for (const r of rows) {
    const key = `${r.statisticId}\u0000${r.day}\u0000${r.pillar}`;
    const into = orgRows.get(key);
    if (into) {
      into.count += r.count;
      into.sum += r.sum;
      into.numerator += r.numerator;
      into.denominator += r.denominator;
    } else orgRows.set(key, { ...r });
  }
  const summed = [...orgRows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  if (dialect === 'postgres') {
    await upsertArrays(db, 'rollup_days', orgId, generation, rows, true);
    await upsertArrays(db, 'rollup_org_days', orgId, generation, summed, false);
    return;
  }
  const add = (table: 'rollup_days' | 'rollup_org_days') => ({
    count: sql<number>`${sql.ref(`${table}.count`)} + excluded.count`,
    sum: sql<number>`${sql.ref(`${table}.sum`)} + excluded.sum`,
    numerator: sql<number>`${sql.ref(`${table}.numerator`)} + excluded.numerator`,
    denominator: sql<number>`${sql.ref(`${table}.denominator`)} + excluded.denominator`,
  });
  for (let i = 0; i < rows.length; i += UPSERT_ROWS) {
    await db
      .insertInto('rollup_days')
      .values(
        rows.slice(i, i + UPSERT_ROWS).map((r) => ({
          org_id: orgId,
          generation,
          statistic_id: r.statisticId,
          day: r.day,
          worker_id: r.workerId,
          pillar: r.pillar,
          count: r.count,
          sum: r.sum,
          numerator: r.numerator,
          denominator: r.denominator,
        })),
      )
      .onConflict((oc) => oc.columns(['org_id', 'generation', 'statistic_id', 'day', 'worker_id', 'pillar']).doUpdateSet(add('rollup_days')))
      .execute();
  }
  for (let i = 0; i < summed.length; i += UPSERT_ROWS) {
    await db
      .insertInto('rollup_org_days')
      .values(
        summed.slice(i, i + UPSERT_ROWS).map((r) => ({
          org_id: orgId,
          generation,
          statistic_id: r.statisticId,
          day: r.day,
          pillar: r.pillar,
          count: r.count,
          sum: r.sum,
          numerator: r.numerator,
          denominator: r.denominator,
        })),
      )
      .onConflict((oc) => oc.columns(['org_id', 'generation', 'statistic_id', 'day', 'pillar']).doUpdateSet(add('rollup_org_days')))
      .execute();
  }
}

async function upsertArrays(
  db: Executor,
  table: 'rollup_days' | 'rollup_org_days',
  orgId: string,
  generation: number,
  rows: PartsRow[],
  perWorker: boolean,
): Promise<void> {
  if (rows.length === 0) return;
  const key = perWorker ? ['statistic_id', 'day', 'worker_id', 'pillar'] : ['statistic_id', 'day', 'pillar'];
  const keys = [
    sql`${rows.map((r) => r.statisticId)}::text[]`,
    sql`${rows.map((r) => r.day)}::text[]`,
    ...(perWorker ? [sql`${rows.map((r) => r.workerId)}::text[]`] : []),
    sql`${rows.map((r) => r.pillar)}::text[]`,
  ];
  const parts = [
    sql`${rows.map((r) => r.count)}::int[]`,
    sql`${rows.map((r) => r.sum)}::float8[]`,
    sql`${rows.map((r) => r.numerator)}::float8[]`,
    sql`${rows.map((r) => r.denominator)}::int[]`,
  ];
  const columns = ['org_id', 'generation', ...key, 'count', 'sum', 'numerator', 'denominator'];
  const added = ['count', 'sum', 'numerator', 'denominator'].map((c) => sql`${sql.ref(c)} = ${sql.ref(`${table}.${c}`)} + ${sql.ref(`excluded.${c}`)}`);
  await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))})
    select ${orgId}::text, ${generation}::int, * from unnest(${sql.join([...keys, ...parts])})
    on conflict (${sql.join(['org_id', 'generation', ...key].map((c) => sql.ref(c)))}) do update set ${sql.join(added)}`.execute(db);
}

/** A few (generation, statistic, day) cells of generations other than those kept, to delete a bounded number of rows at a time. */
export async function staleCells(
  db: Executor,
  orgId: string,
  keep: number[],
  limit: number,
): Promise<{ generation: number; statistic_id: string; day: string }[]> {
  return db
    .selectFrom('rollup_org_days')
    .select(['generation', 'statistic_id', 'day'])
    .distinct()
    .where('org_id', '=', orgId)
    .where('generation', 'not in', keep)
    .limit(limit)
    .execute();
}

export async function deleteCells(db: Executor, orgId: string, cells: { generation: number; statistic_id: string; day: string }[]): Promise<void> {
  for (const cell of cells) {
    for (const table of ['rollup_days', 'rollup_org_days'] as const) {
      await db
        .deleteFrom(table)
        .where('org_id', '=', orgId)
        .where('generation', '=', cell.generation)
        .where('statistic_id', '=', cell.statistic_id)
        .where('day', '=', cell.day)
        .execute();
    }
  }
}

/** Parts day by day over a range (index 0 is its first day); 0 where there were none. */
export interface DailyParts {
  count: Float64Array;
  sum: Float64Array;
  numerator: Float64Array;
  denominator: Float64Array;
}

function noParts(days: number): DailyParts {
  return { count: new Float64Array(days), sum: new Float64Array(days), numerator: new Float64Array(days), denominator: new Float64Array(days) };
}

/**
 * Each statistic's parts over `days` (consecutive, in order), summed over pillars and
 * workers (or of one worker, `workerId`), by statistic id; a statistic without parts in the
 * range is absent.
 */
export async function readDayParts(
  db: Executor,
  q: { orgId: string; generation: number; statisticIds: string[]; days: string[]; workerId?: string },
): Promise<Map<string, DailyParts>> {
  const byStatistic = new Map<string, DailyParts>();
  const [from, to] = [q.days[0], q.days.at(-1)];
  if (from === undefined || to === undefined || q.statisticIds.length === 0) return byStatistic;
  // The organization's parts are kept summed over workers beside each worker's.
  let query = db
    .selectFrom(q.workerId === undefined ? 'rollup_org_days' : 'rollup_days')
    .select(['statistic_id', 'day', ...summedParts()])
    .where('org_id', '=', q.orgId)
    .where('generation', '=', q.generation)
    .where('statistic_id', 'in', q.statisticIds)
    .where('day', '>=', from)
    .where('day', '<=', to)
    .groupBy(['statistic_id', 'day']);
  if (q.workerId !== undefined) query = query.where('worker_id', '=', q.workerId);
  const dayIndex = new Map(q.days.map((day, i) => [day, i]));
  for (const row of numeric(await query.execute())) {
    const d = dayIndex.get(row.day);
    if (d === undefined) continue; // not a day of the range: the query asked for none
    let parts = byStatistic.get(row.statistic_id);
    if (!parts) byStatistic.set(row.statistic_id, (parts = noParts(q.days.length)));
    parts.count[d] = row.count;
    parts.sum[d] = row.sum;
    parts.numerator[d] = row.numerator;
    parts.denominator[d] = row.denominator;
  }
  return byStatistic;
}

/**
 * Every worker's parts of one statistic over `days` (consecutive, in order), summed over
 * pillars, by worker id; a worker without parts in the range is absent. With `workerId`,
 * that worker's only.
 *
 * The database joins each day's rows into one string, so that a row per day crosses rather
 * than a row per (day, worker, pillar): handing rows to JavaScript one by one, not finding
 * them, is what a read of every worker costs (and summing pillars here, not in a grouped
 * subquery, halves the database's share). Both databases render a double as text that reads
 * back to the same number (a test holds them to it); ids hold no space.
 */
export async function readWorkerDays(
  db: Executor,
  q: { orgId: string; generation: number; statisticId: string; days: string[]; workerId?: string },
): Promise<Map<string, DailyParts>> {
  const [from, to] = [q.days[0], q.days.at(-1)];
  const byWorker = new Map<string, DailyParts>();
  if (from === undefined || to === undefined) return byWorker;
  let query = db
    .selectFrom('rollup_days')
    .select([
      'day',
      sql<string>`string_agg(worker_id || ' ' || ${sql.ref('count')} || ' ' || ${sql.ref('sum')} || ' ' || numerator || ' ' || denominator, ' ')`.as('workers'),
    ])
    .where('org_id', '=', q.orgId)
    .where('generation', '=', q.generation)
    .where('statistic_id', '=', q.statisticId)
    .where('day', '>=', from)
    .where('day', '<=', to)
    .groupBy('day');
  if (q.workerId !== undefined) query = query.where('worker_id', '=', q.workerId);
  const rows = await query.execute();
  const dayIndex = new Map(q.days.map((day, i) => [day, i]));
  for (const row of rows) {
    const d = dayIndex.get(row.day);
    if (d === undefined) continue; // not a day of the range: the query asked for none
    const fields = row.workers.split(' ');
    for (let i = 0; i < fields.length; i += 5) {
      const workerId = fields[i];
      let parts = byWorker.get(workerId);
      if (!parts) byWorker.set(workerId, (parts = noParts(q.days.length)));
      // A worker has a row per pillar: they add up.
      parts.count[d] += Number(fields[i + 1]);
      parts.sum[d] += Number(fields[i + 2]);
      parts.numerator[d] += Number(fields[i + 3]);
      parts.denominator[d] += Number(fields[i + 4]);
    }
  }
  return byWorker;
}

/** A statistic's parts summed per pillar over a range of days. */
export interface PillarPartsRow extends RollupParts {
  statistic_id: string;
  pillar: string;
}

export async function readPillarParts(
  db: Executor,
  q: { orgId: string; generation: number; statisticIds: string[]; from: string; to: string; workerId?: string },
): Promise<PillarPartsRow[]> {
  // The organization's parts are kept summed over workers beside each worker's.
  let query = db
    .selectFrom(q.workerId === undefined ? 'rollup_org_days' : 'rollup_days')
    .select(['statistic_id', 'pillar', ...summedParts()])
    .where('org_id', '=', q.orgId)
    .where('generation', '=', q.generation)
    .where('statistic_id', 'in', q.statisticIds)
    .where('day', '>=', q.from)
    .where('day', '<=', q.to)
    .groupBy(['statistic_id', 'pillar']);
  if (q.workerId !== undefined) query = query.where('worker_id', '=', q.workerId);
  return numeric(await query.execute());
}

/** The four parts summed over the rows a read groups. */
function summedParts() {
  return (['count', 'sum', 'numerator', 'denominator'] as const).map((part) => sql<number>`sum(${sql.ref(part)})`.as(part));
}

/** Every row of a generation, for verification. */
export async function generationRows(db: Executor, orgId: string, generation: number) {
  return db
    .selectFrom('rollup_days')
    .select(['statistic_id', 'day', 'worker_id', 'pillar', 'count', 'sum', 'numerator', 'denominator'])
    .where('org_id', '=', orgId)
    .where('generation', '=', generation)
    .execute()
    .then(numeric);
}

/** Every event of the organization, a page at a time, for verification. */
export async function* allEvents(db: Executor, orgId: string, page = 5000): AsyncGenerator<StoredEvent[]> {
  let after: { ts: string; id: string } | undefined;
  for (;;) {
    let query = db.selectFrom('events').select(eventFields).where('org_id', '=', orgId).where('kind', '=', 'event').orderBy('ts').orderBy('id').limit(page);
    if (after) {
      const a = after;
      query = query.where((eb) => eb(eb.refTuple('ts', 'id'), '>', eb.tuple(a.ts, a.id)));
    }
    const rows = await query.execute();
    if (rows.length === 0) return;
    yield rows;
    const last = rows[rows.length - 1] as StoredEvent;
    after = { ts: last.ts, id: last.id };
  }
}

/** Every organization, for verification. */
export async function organizationIds(db: Executor): Promise<string[]> {
  return (await db.selectFrom('organizations').select('id').orderBy('id').execute()).map((r) => r.id);
}

/** PostgreSQL sums integers as bigint, which its driver gives as text. */
function numeric<T extends RollupParts>(rows: T[]): T[] {
  return rows.map((r) => ({ ...r, count: Number(r.count), sum: Number(r.sum), numerator: Number(r.numerator), denominator: Number(r.denominator) }));
}

/**
 * Deletes the organization's rollups of days before `day`, in every generation: one
 * statement per statistic and table, each an index range of the primary key. Returns how
 * many rows went.
 */
export async function deleteRollupsBefore(db: Executor, orgId: string, day: string): Promise<number> {
  const series = await db
    .selectFrom('rollup_org_days')
    .select(['generation', 'statistic_id'])
    .distinct()
    .where('org_id', '=', orgId)
    .where('day', '<', day)
    .execute();
  let deleted = 0;
  for (const { generation, statistic_id } of series) {
    for (const table of ['rollup_days', 'rollup_org_days'] as const) {
      const result = await db
        .deleteFrom(table)
        .where('org_id', '=', orgId)
        .where('generation', '=', generation)
        .where('statistic_id', '=', statistic_id)
        .where('day', '<', day)
        .executeTakeFirst();
      deleted += Number(result.numDeletedRows);
    }
  }
  return deleted;
}

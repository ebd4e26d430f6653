import { randomBytes } from 'node:crypto';
import type SqliteDatabase from 'better-sqlite3';
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { Schema } from '../contract/types';
import type { DayListCache, ListScope, WorkerDay } from './day-list-cache';
import type { Dialect } from './db';
import type { Database, Executor, RollupParts, RollupStateTable } from './schema';
import { idsDrawnWith } from './ids';
import { preparedStatement, sqliteConnectionOf } from './sqlite';

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

/**
 * Written in the ingest transaction with the batch's stored events: the batch
 * waits here until the rollups worker adds it, known by its first event's id.
 */
export async function insertOutbox(db: Executor, batch: { orgId: string; appId: string; events: { id: string; ts: string }[] }): Promise<void> {
  const [first] = batch.events;
  const span = spanOf(batch.events.map((e) => e.ts));
  if (!first || !span) return;
  await db
    .insertInto('rollup_outbox')
    .values({
      id: first.id,
      org_id: batch.orgId,
      app_id: batch.appId,
      first_ts: span.first,
      last_ts: span.last,
      created_at: new Date().toISOString(),
      applied_generation: null,
    })
    .execute();
}

/** Which waiting batches a claim may take: those `ids`, and any created before `createdBefore`. */
export interface OutboxChoice {
  ids: string[];
  createdBefore: string;
}

/**
 * Waiting batches, oldest first (all, or those `only` chooses), locked for
 * this transaction. On PostgreSQL rows another instance holds are skipped, so
 * instances share the work and none takes a batch twice; SQLite serves one
 * process, whose transactions run one at a time.
 */
export async function claimOutbox(db: Executor, dialect: Dialect, limit: number, only?: OutboxChoice): Promise<OutboxBatch[]> {
  let query = db
    .selectFrom('rollup_outbox')
    .select(['id', 'org_id', 'created_at', 'first_ts', 'last_ts'])
    .where('applied_generation', 'is', null)
    .orderBy('id')
    .limit(limit);
  if (only) {
    const { ids, createdBefore } = only;
    query = query.where((eb) => eb.or([eb('created_at', '<', createdBefore), ...(ids.length > 0 ? [eb('id', 'in', ids)] : [])]));
  }
  const rows = await (dialect === 'postgres' ? query.forUpdate().skipLocked().execute() : query.execute());
  return rows.map((row) => ({
    id: row.id,
    orgId: row.org_id,
    createdAt: row.created_at,
    span: row.first_ts !== null && row.last_ts !== null ? { first: row.first_ts, last: row.last_ts } : undefined,
  }));
}

/** The first and last of some events' timestamps (normalized: they compare as strings). */
export interface TimeSpan {
  first: string;
  last: string;
}

/** The first and last of `times`; undefined when there are none. */
export function spanOf(times: string[]): TimeSpan | undefined {
  let span: TimeSpan | undefined;
  for (const ts of times) {
    if (!span) span = { first: ts, last: ts };
    else if (ts < span.first) span.first = ts;
    else if (ts > span.last) span.last = ts;
  }
  return span;
}

/** A batch waiting in the outbox. */
export interface OutboxBatch {
  id: string;
  orgId: string;
  createdAt: string;
  /** Undefined only for a batch that waited from before spans were kept and whose events are all gone. */
  span: TimeSpan | undefined;
}

/** The ids of the organization's batches in the outbox, waiting or kept for a recompute's scan. */
export async function outboxIds(db: Executor, orgId: string): Promise<Set<string>> {
  return new Set((await db.selectFrom('rollup_outbox').select('id').where('org_id', '=', orgId).execute()).map((r) => r.id));
}

/** Once a recompute replaced the answering generation: the batches kept for its scan are in the new one. */
export async function deleteAppliedOutbox(db: Executor, orgId: string): Promise<void> {
  await db.deleteFrom('rollup_outbox').where('org_id', '=', orgId).where('applied_generation', 'is not', null).execute();
}

/** A JSON array of strings the service stored itself (event ids, statistic ids). */
function stringList(json: string): string[] {
  const value: unknown = JSON.parse(json);
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) throw new Error(`not a list of strings: ${json.slice(0, 80)}`);
  return value;
}

/** While a recompute runs, the statistics the answering generation has; empty otherwise. */
export function frozenStatistics(state: RollupStateTable): Set<string> {
  return new Set(state.frozen_statistics === null ? [] : stringList(state.frozen_statistics));
}

/**
 * A new generation to recompute into, in the zone `timeZone`. The answering
 * one freezes with its statistics (`answering`) at `now`, unless a recompute
 * already froze it: that one's target is replaced, its scan starts again.
 */
export async function beginGeneration(db: Executor, orgId: string, timeZone: string, answering: string[], now: string): Promise<void> {
  await db
    .updateTable('rollup_state')
    .set((eb) => ({
      target_generation: eb(eb.fn.coalesce('target_generation', 'generation'), '+', 1),
      target_time_zone: timeZone,
      frozen_at: eb.fn.coalesce('frozen_at', eb.val(now)),
      frozen_statistics: eb.fn.coalesce('frozen_statistics', eb.val(JSON.stringify(answering))),
      scan_ts: null,
      scan_id: null,
    }))
    .where('org_id', '=', orgId)
    .execute();
}

export async function deleteOutbox(db: Executor, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('rollup_outbox').where('id', 'in', ids).execute();
}

/**
 * How many of the batches `ids` still wait in the outbox. On PostgreSQL those
 * are locked for this transaction, and a batch another transaction holds
 * (another instance adding it) does not count.
 */
export async function waitingOutbox(db: Executor, dialect: Dialect, ids: string[]): Promise<number> {
  let waiting = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const query = db
      .selectFrom('rollup_outbox')
      .select('id')
      .where('id', 'in', ids.slice(i, i + 500))
      .where('applied_generation', 'is', null);
    waiting += (await (dialect === 'postgres' ? query.forUpdate().skipLocked() : query).execute()).length;
  }
  return waiting;
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

/** The events of the batches `ids` (see inBatches). */
export async function eventsOfBatches(db: Executor, ids: string[]): Promise<StoredEvent[]> {
  return db
    .selectFrom('events as e')
    .select(eventFields.map((field) => `e.${field}` as const))
    .where(inBatches(ids))
    .execute();
}

/** A position in the organization's events, in (`ts`, `id`) order. */
export interface EventKey {
  ts: string;
  id: string;
}

/**
 * A chunk of a recompute: the organization's next `size` events after
 * `after` (from the first when undefined) up to `through` (a timestamp), in
 * (`ts`, `id`) order, of any kind and any batch: the bound is on what is
 * read, however much of it counts.
 */
export interface Chunk {
  orgId: string;
  /** The generation under recompute. */
  generation: number;
  after: EventKey | undefined;
  through: string;
  size: number;
}

/** The organization's first event after `after`, any kind; undefined when none is left. */
export async function firstEventAfter(db: Executor, orgId: string, after: EventKey | undefined): Promise<EventKey | undefined> {
  let query = db.selectFrom('events').select(['ts', 'id']).where('org_id', '=', orgId);
  // A row-value comparison: both databases read it as one range of the (org_id, ts, id) index.
  if (after) query = query.where((eb) => eb(eb.refTuple('ts', 'id'), '>', eb.tuple(after.ts, after.id)));
  return query.orderBy('ts').orderBy('id').limit(1).executeTakeFirst();
}

/**
 * The chunk's events that count: of kind event, leaving out those of batches
 * still in the outbox (waiting, or already added to the generation under
 * recompute), which the outbox adds; and the last event read.
 */
export async function readChunk(db: Executor, chunk: Chunk): Promise<{ events: StoredEvent[]; last: EventKey | undefined }> {
  let query = db
    .selectFrom('events as e')
    .select(eventFields.map((f) => `e.${f}` as const))
    .select((eb) =>
      eb
        .case()
        .when(
          eb.and([
            eb('e.kind', '=', 'event'),
            // Under an OR, PostgreSQL looks the batch up by its key for each event, never joining the
            // whole outbox (which grows during a recompute) on statistics that may not have seen it grow.
            eb.or([
              eb('e.batch_id', 'is', null),
              eb.not(
                eb.exists(
                  eb
                    .selectFrom('rollup_outbox as o')
                    .select('o.id')
                    .whereRef('o.id', '=', 'e.batch_id')
                    .where((o) => o.or([o('o.applied_generation', 'is', null), o('o.applied_generation', '=', chunk.generation)])),
                ),
              ),
            ]),
          ]),
        )
        .then(1)
        .else(0)
        .end()
        .as('counts'),
    )
    .where('e.org_id', '=', chunk.orgId)
    .where('e.ts', '<=', chunk.through)
    .orderBy('e.ts')
    .orderBy('e.id')
    .limit(chunk.size);
  const after = chunk.after;
  if (after) query = query.where((eb) => eb(eb.refTuple('e.ts', 'e.id'), '>', eb.tuple(after.ts, after.id)));
  const rows = await query.execute();
  const last = rows.at(-1);
  return {
    events: rows.filter((r) => Number(r.counts) === 1).map(({ counts: _, ...event }) => event),
    last: last && { ts: last.ts, id: last.id },
  };
}

/** Batches taken from the outbox, to be added to `generation`. */
export interface OutboxBatches {
  orgId: string;
  generation: number;
  ids: string[];
}

// Batches whose ids were drawn this close together are read as one range of events.
const BATCHES_APART_MS = 2_000;

/**
 * The events (`e`) of the batches `ids`, found where they are in the primary
 * key (in code-unit order on both databases, see
 * src/data/migrations/011_event_id_order.ts): a batch's event ids were drawn
 * together (its outbox row's is the first), so batches drawn close together
 * are one range, read in key order, kept by batch_id. Each event looked up by
 * its id instead cost PostgreSQL 170-200 ms a drain of 33,200 events (one
 * index descent each) against about 20 ms (measured), and the outbox had to
 * keep every batch's list of ids.
 */
function inBatches(ids: string[]) {
  const ranges: { from: string; to: string; ms: number }[] = [];
  for (const drawn of [...ids].sort().map(idsDrawnWith)) {
    const last = ranges[ranges.length - 1];
    if (last && drawn.ms - last.ms <= BATCHES_APART_MS) Object.assign(last, { to: drawn.to, ms: drawn.ms });
    else ranges.push(drawn);
  }
  const within = ranges.map(({ from, to }) => sql`(e.id >= ${from} and e.id <= ${to})`);
  return sql<boolean>`(${sql.join(within, sql` or `)}) and e.batch_id in (${sql.join(ids)})`;
}

// What sumInDatabase reads of an event.
const summedColumns = sql.join([...eventFields, 'kind'].map((field) => sql.ref(`e.${field}`)));

/**
 * PostgreSQL: adds the chunk's events that count (as readChunk tells them)
 * to its generation in one statement, matched, valued, put on their day and
 * summed in the database: nothing but the sums crosses to the service.
 * Resolves with how many events counted and the last event read.
 */
export async function addChunkInDatabase(
  db: Executor,
  chunk: Chunk,
  definitions: Map<string, Definition[]>,
  days: { day: string; start: string }[],
): Promise<{ counted: number; last: EventKey | undefined }> {
  const after = chunk.after ?? { ts: '', id: '' };
  const read = sql`
      select ${summedColumns}
        from events e
       where e.org_id = ${chunk.orgId} and (e.ts, e.id) > (${after.ts}, ${after.id}) and e.ts >= ${after.ts} and e.ts <= ${chunk.through}
       order by e.ts, e.id
       limit ${chunk.size}`;
  const notInOutbox = sql`(r.batch_id is null
              or not exists (select from rollup_outbox o
                              where o.id = r.batch_id and (o.applied_generation is null or o.applied_generation = ${chunk.generation})))`;
  return sumInDatabase(db, chunk, { read, counts: notInOutbox, tells: true }, definitions, days);
}

/**
 * PostgreSQL: adds the events of batches taken from the outbox to their
 * generation in one statement, as addChunkInDatabase adds a chunk; `days`
 * (daysSpanned over the batches' spans) puts each on its local day.
 */
export async function addBatchesInDatabase(
  db: Executor,
  batches: OutboxBatches,
  definitions: Map<string, Definition[]>,
  days: { day: string; start: string }[],
): Promise<void> {
  const read = sql`
      select ${summedColumns}
        from events e
       where e.org_id = ${batches.orgId} and ${inBatches(batches.ids)}`;
  await sumInDatabase(db, batches, { read, counts: sql`true`, tells: false }, definitions, days);
}

/**
 * The statement of addChunkInDatabase and addBatchesInDatabase: the events
 * `read` selects, of kind event and for which `counts` holds (over `r`),
 * added to `into.generation`; when it `tells`, with how many counted and the
 * last read (a chunk's progress: batches need neither, and finding the last
 * costs a sort of every event read). The rules are those of
 * src/domain/rollup-rules.ts (matches, addPartsOf, pillarOf), written in SQL;
 * `days` puts each event on its local day, so that days come from the one
 * place the service computes them. Metadata is read as jsonb, whose numbers,
 * booleans, objects and last-key-wins are JSON.parse's for the text the
 * service stores; text jsonb refuses (a \u0000 escape) fails the statement
 * with a data exception (SQLSTATE class 22), and the service then sums those
 * events instead.
 */
async function sumInDatabase(
  db: Executor,
  into: { orgId: string; generation: number },
  events: { read: RawBuilder<unknown>; counts: RawBuilder<unknown>; tells: boolean },
  definitions: Map<string, Definition[]>,
  days: { day: string; start: string }[],
): Promise<{ counted: number; last: EventKey | undefined }> {
  const list = [...definitions].flatMap(([appId, ofApp]) => ofApp.map((definition) => ({ appId, definition })));
  const valueFields = list.map(({ definition }) => (definition.aggregation === 'sumField' || definition.aggregation === 'ratio' ? definition.valueField : undefined));
  const rows = list.map(
    ({ appId, definition }, i) =>
      sql`(${i}::int, ${appId}::text, ${definition.id}::text, ${definition.ownedBy === 'extractor'}::boolean, ${definition.sourceEventTypes}::text[], ${definition.sourceEventCategories}::text[], ${definition.pillar}::text, ${definition.aggregation}::text)`,
  );
  const values = valueFields.flatMap((field, i) => (field === undefined ? [] : [sql`when ${i} then ${valueAt(field)}`]));
  // Rows are written in key order, as addParts writes them: concurrent writers lock rows in the same order.
  const order = (columns: string[]) => sql.join(columns.map((c) => sql`${sql.ref(c)} collate "C"`));
  const read = sql`
    read as materialized (${events.read}),
    last as (select ts, id from read order by ts desc, id desc limit 1)`;
  // The rows read (tens of MB at most) held in memory: with the default 4 MB they go through temporary
  // files. No JIT: the planner's estimates of the whole range ask for it, and compiling costs more than the chunk saves.
  await sql`set local work_mem = '64MB'`.execute(db);
  await sql`set local jit = off`.execute(db);
  if (rows.length === 0) {
    const result = await sql<{ ts: string; id: string }>`with ${read} select ts, id from last`.execute(db);
    return { counted: 0, last: result.rows[0] };
  }
  const result = await sql<{ counted: string; ts: string | null; id: string | null }>`
    with ${read},
    counted as materialized (
      select r.app_id, r.worker_id, r.event_type, r.category, r.statistic_id, r.duration, r.pillar,
             (${days.map((d) => d.day)}::text[])[width_bucket(r.ts collate "C", ${days.map((d) => d.start)}::text[])] as day,
             ${values.length > 0 ? sql`r.metadata::jsonb` : sql`null::jsonb`} as m
        from read r
       where r.kind = 'event' and ${events.counts}
    ),
    defs (i, app_id, id, extractor, types, categories, pillar, aggregation) as (values ${sql.join(rows)}),
    matched as (
      select d.id as statistic_id, c.worker_id, coalesce(c.pillar, d.pillar) as pillar, d.aggregation, c.duration,
             c.day,
             ${values.length > 0 ? sql`case d.i ${sql.join(values, sql` `)} end` : sql`null::jsonb`} as v
        from counted c
        join defs d on d.app_id = c.app_id
         and case when c.statistic_id is not null then c.statistic_id = d.id
                  else not d.extractor and c.event_type = any(d.types) and c.category = any(d.categories) end
    ),
    parts as (
      select statistic_id, day, worker_id, pillar,
             count(*) as count,
             coalesce(sum(case aggregation
                            when 'sumField' then case when jsonb_typeof(v) = 'number' then (v #>> '{}')::float8 end
                            when 'durationMinutes' then duration end), 0)::float8 as sum,
             coalesce(sum(case when aggregation = 'ratio' then
                            case jsonb_typeof(v) when 'number' then (v #>> '{}')::float8 when 'boolean' then (v #>> '{}')::boolean::int end
                          end), 0)::float8 as numerator,
             count(*) filter (where aggregation = 'ratio' and jsonb_typeof(v) in ('number', 'boolean')) as denominator
        from matched
       group by statistic_id, day, worker_id, pillar
    ),
    per_worker as (
      insert into rollup_days (org_id, generation, statistic_id, day, worker_id, pillar, count, sum, numerator, denominator)
      select ${into.orgId}, ${into.generation}, statistic_id, day, worker_id, pillar, count, sum, numerator, denominator
        from parts
       order by ${order(['statistic_id', 'day', 'worker_id', 'pillar'])}
      on conflict (org_id, generation, statistic_id, day, worker_id, pillar) do update set ${sql.raw(partsAdded('rollup_days', 'excluded'))}
    ),
    per_org as (
      insert into rollup_org_days (org_id, generation, statistic_id, day, pillar, count, sum, numerator, denominator)
      select ${into.orgId}, ${into.generation}, statistic_id, day, pillar, sum(count), sum(sum), sum(numerator), sum(denominator)
        from parts
       group by statistic_id, day, pillar
       order by ${order(['statistic_id', 'day', 'pillar'])}
      on conflict (org_id, generation, statistic_id, day, pillar) do update set ${sql.raw(partsAdded('rollup_org_days', 'excluded'))}
    )
    ${
      events.tells
        ? sql`select (select count(*) from counted) as counted, last.ts, last.id from (select 1) one left join last on true`
        : sql`select 0 as counted, null as ts, null as id`
    }
  `.execute(db);
  const row = result.rows[0];
  return { counted: Number(row?.counted ?? 0), last: row?.ts && row.id ? { ts: row.ts, id: row.id } : undefined };
}

/**
 * jsonb `c.m` at a dotted path as fieldOf walks it: own keys of objects only
 * (never into an array), null when absent. A key PostgreSQL text cannot hold
 * (U+0000) is in no metadata it can read: null.
 */
function valueAt(path: string) {
  const keys = path.split('.');
  if (keys.some((k) => k.includes('\u0000'))) return sql`null::jsonb`;
  const objects = keys.map((_, depth) => sql`jsonb_typeof(c.m #> ${keys.slice(0, depth)}::text[]) = 'object'`);
  return sql`case when ${sql.join(objects, sql` and `)} then c.m #> ${keys}::text[] end`;
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

/**
 * Cells of parts as a drain adds them: each key an index into one list of
 * the names they use, the parts four numbers a cell. Cloning a few arrays
 * costs SQLite's two threads far less than cloning thousands of objects, and
 * PostgreSQL reads them as a few arrays.
 */
export interface PackedCells {
  names: string[];
  /** Per cell: its statistic, worker, day and pillar, as indexes into names. */
  keys: Uint32Array;
  /** Per cell: count, sum, numerator, denominator. */
  parts: Float64Array;
}

/** Where each of a cell's four keys is among PackedCells' keys (cell × 4 + this). */
export const CELL_KEY = { statistic: 0, worker: 1, day: 2, pillar: 3 } as const;

/** Names as PackedCells keeps them: each once, known by its index in `list`. */
export class NameList {
  readonly list: string[] = [];
  private readonly indexes = new Map<string, number>();

  indexOf(name: string): number {
    let index = this.indexes.get(name);
    if (index === undefined) {
      index = this.list.push(name) - 1;
      this.indexes.set(name, index);
    }
    return index;
  }
}

/** Packs `cells`, in their order. */
export function packCells(cells: PartsRow[]): PackedCells {
  const names = new NameList();
  const keys = new Uint32Array(cells.length * 4);
  const parts = new Float64Array(cells.length * 4);
  // Element by element: a drain packs tens of thousands of cells, and two arrays made per cell to copy from cost
  // 7-11 ms per 40,000 cells against 4-5 (measured).
  let k = 0;
  for (const cell of cells) {
    keys[k + CELL_KEY.statistic] = names.indexOf(cell.statisticId);
    keys[k + CELL_KEY.worker] = names.indexOf(cell.workerId);
    keys[k + CELL_KEY.day] = names.indexOf(cell.day);
    keys[k + CELL_KEY.pillar] = names.indexOf(cell.pillar);
    parts[k] = cell.count;
    parts[k + 1] = cell.sum;
    parts[k + 2] = cell.numerator;
    parts[k + 3] = cell.denominator;
    k += 4;
  }
  return { names: names.list, keys, parts };
}

/** The cells of `packed`, in their order: packCells undone. */
export function unpackCells({ names, keys, parts }: PackedCells): PartsRow[] {
  const cells: PartsRow[] = [];
  const name = (k: number) => names[keys[k] ?? 0] ?? '';
  for (let k = 0; k < keys.length; k += 4) {
    cells.push({
      statisticId: name(k),
      workerId: name(k + 1),
      day: name(k + 2),
      pillar: name(k + 3),
      count: parts[k] ?? 0,
      sum: parts[k + 1] ?? 0,
      numerator: parts[k + 2] ?? 0,
      denominator: parts[k + 3] ?? 0,
    });
  }
  return cells;
}

/**
 * Rows of a table of parts, packed as cells are: per row the names of its
 * `key` columns (indexes into names, in that order), then its four parts.
 */
interface PackedRows {
  table: 'rollup_days' | 'rollup_org_days';
  key: readonly ('statistic_id' | 'worker_id' | 'day' | 'pillar')[];
  names: string[];
  keys: Uint32Array;
  parts: Float64Array;
}

const PART_COLUMNS = ['count', 'sum', 'numerator', 'denominator'] as const;

/** The PostgreSQL type of each column of a table of parts but its organization and generation. */
const PART_TYPES: Record<PackedRows['key'][number] | (typeof PART_COLUMNS)[number], string> = {
  statistic_id: 'text',
  worker_id: 'text',
  day: 'text',
  pillar: 'text',
  count: 'integer',
  sum: 'float8',
  numerator: 'float8',
  denominator: 'integer',
};

/**
 * Adds parts to a generation's rows (and the organization's, summed over
 * workers). The cells come in key order (statistic, day, worker, pillar), and
 * the organization's rows are sorted so, so that concurrent writers lock rows
 * in the same order. On PostgreSQL one statement per table over the rows as an
 * array a column (a fixed text whatever the number of rows); on SQLite (a
 * transaction of Db.transaction(), on its connection) a cached statement per row.
 */
export async function addParts(trx: Transaction<Database>, orgId: string, generation: number, cells: PackedCells): Promise<void> {
  // The columns of a cell's keys in CELL_KEY's order.
  const perWorker: PackedRows = { table: 'rollup_days', key: ['statistic_id', 'worker_id', 'day', 'pillar'], ...cells };
  const connection = sqliteConnectionOf(trx);
  for (const rows of [perWorker, summedOverWorkers(cells)]) {
    if (rows.keys.length === 0) continue;
    if (connection) upsertRowByRow(connection, orgId, generation, rows);
    else await upsertRows(trx, orgId, generation, rows);
  }
}

/**
 * The cells' parts summed per statistic, day and pillar, in that order, as rollup_org_days keeps them. The
 * cells are in key order, so each statistic and day is one run of them: only its pillars need ordering
 * (1.45 ms per 40,000 cells against 7.3 with a map of every row by a joined key and a sort of them all, measured).
 */
function summedOverWorkers({ names, keys, parts }: PackedCells): PackedRows {
  const cells = keys.length / 4;
  const rowKeys = new Uint32Array(cells * 3);
  const rowParts = new Float64Array(cells * 4);
  let rows = 0;
  for (let start = 0; start < cells; ) {
    const statistic = keys[start * 4 + CELL_KEY.statistic] ?? 0;
    const day = keys[start * 4 + CELL_KEY.day] ?? 0;
    const ofPillar = new Map<number, number[]>();
    let cell = start;
    for (; cell < cells && keys[cell * 4 + CELL_KEY.statistic] === statistic && keys[cell * 4 + CELL_KEY.day] === day; cell++) {
      const pillar = keys[cell * 4 + CELL_KEY.pillar] ?? 0;
      let sums = ofPillar.get(pillar);
      if (!sums) ofPillar.set(pillar, (sums = [0, 0, 0, 0]));
      for (let p = 0; p < 4; p++) sums[p] = (sums[p] ?? 0) + (parts[cell * 4 + p] ?? 0);
    }
    start = cell;
    const pillars = [...ofPillar].sort(([a], [b]) => compareNames(names[a] ?? '', names[b] ?? ''));
    for (const [pillar, sums] of pillars) {
      rowKeys.set([statistic, day, pillar], rows * 3);
      rowParts.set(sums, rows * 4);
      rows++;
    }
  }
  return {
    table: 'rollup_org_days',
    key: ['statistic_id', 'day', 'pillar'],
    names,
    keys: rowKeys.subarray(0, rows * 3),
    parts: rowParts.subarray(0, rows * 4),
  };
}

/** Code-unit order, as SQLite and PostgreSQL's "C" collation compare: the order keys are locked in. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** SQLite: one cached single-row statement per table; a many-row INSERT built by Kysely cost more to build than to run (measured). */
function upsertRowByRow(connection: SqliteDatabase.Database, orgId: string, generation: number, { table, key, names, keys, parts }: PackedRows): void {
  const upsert = preparedStatement(connection, upsertOneRow(table, key));
  const width = key.length;
  const values: unknown[] = [orgId, generation];
  for (let row = 0; row * width < keys.length; row++) {
    for (let c = 0; c < width; c++) values[2 + c] = names[keys[row * width + c] ?? 0];
    for (let p = 0; p < 4; p++) values[2 + width + p] = parts[row * 4 + p];
    upsert.run(values);
  }
}

/** SQLite: one row of parts added to `table`, its values in the order org, generation, `key`, parts. */
function upsertOneRow(table: PackedRows['table'], key: PackedRows['key']): string {
  const columns = ['org_id', 'generation', ...key, ...PART_COLUMNS];
  return `insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})
    on conflict (${conflictKey(table).join(', ')}) do update set ${partsAdded(table, 'excluded')}`;
}

/** An update's SET of each part of `into` (a table or its alias) plus that of `from`'s row, as SQL text: both are this module's names. */
function partsAdded(into: string, from: string): string {
  return PART_COLUMNS.map((c) => `${c} = ${into}.${c} + ${from}.${c}`).join(', ');
}

/** A table of parts' primary key. */
function conflictKey(table: PackedRows['table']): string[] {
  return ['org_id', 'generation', 'statistic_id', 'day', ...(table === 'rollup_days' ? ['worker_id'] : []), 'pillar'];
}

/**
 * PostgreSQL: the rows as an array a column, unnested together. For 40,000 cells PostgreSQL spent 341-358 ms
 * upserting them against 438-450 as JSON objects, of which reading them 93-100 against 165-217
 * (json_to_recordset), and Node 61-80 against 87-97 (measured). Each name is quoted once, however many rows
 * use it; the parts go as JavaScript writes numbers, which float8 and integer read (Infinity and NaN included).
 *
 * The rows that exist are updated first, joined to the table's rows of the cells' statistics and days, and only
 * the others inserted (ON CONFLICT still adds to a row another transaction inserted meanwhile): an upsert finds
 * each row with a descent of the wide primary key and WAL-logs a lock of it before its update. For make bench's
 * drains (56,000 cells, all there) PostgreSQL's CPU fell by 31 % and the WAL written by 38 % in a
 * microbenchmark (docs/performance-history.md, 2026-11-30 05:17). PostgreSQL plans the join as a hash join over
 * an index range of those statistics and days for a drain of many cells, and as a probe of the key per cell for
 * a few, whether or not the table has been analyzed. Both passes take rows in key order, as the cells come.
 */
async function upsertRows(db: Executor, orgId: string, generation: number, { table, key, names, keys, parts }: PackedRows): Promise<void> {
  const quoted = names.map((name) => `"${name.replace(/["\\]/g, '\\$&')}"`);
  const width = key.length;
  const rows = keys.length / width;
  const typed = (column: keyof typeof PART_TYPES, elements: { join(separator: string): string }) =>
    sql`${`{${elements.join(',')}}`}::${sql.raw(PART_TYPES[column])}[]`;
  // Filled by plain loops: with a closure per element the arrays of 40,000 cells took 55 ms against 33-38 (measured).
  const keyArrays = key.map((column, c) => {
    const elements = new Array<string>(rows);
    for (let row = 0; row < rows; row++) elements[row] = quoted[keys[row * width + c] ?? 0] ?? '';
    return typed(column, elements);
  });
  const partArrays = PART_COLUMNS.map((column, p) => {
    const elements = new Float64Array(rows);
    for (let row = 0; row < rows; row++) elements[row] = parts[row * 4 + p] ?? 0;
    return typed(column, elements);
  });
  /** The distinct names of a key column over the rows. */
  const namesOf = (column: 'statistic_id' | 'day') => {
    const c = key.indexOf(column);
    const used = new Set<number>();
    for (let row = 0; row < rows; row++) used.add(keys[row * width + c] ?? 0);
    return typed(column, [...used].map((n) => quoted[n] ?? ''));
  };
  const columns = [...key, ...PART_COLUMNS];
  await sql`with v as (
      select * from unnest(${sql.join([...keyArrays, ...partArrays])}) with ordinality as r(${sql.join(columns.map((c) => sql.ref(c)))}, n)
    ),
    updated as (
      update ${sql.table(table)} as t set ${sql.raw(partsAdded('t', 'v'))}
        from v
       where t.org_id = ${orgId}::text and t.generation = ${generation}::int
         and t.statistic_id = any(${namesOf('statistic_id')}) and t.day = any(${namesOf('day')})
         and ${sql.join(
           key.map((c) => sql`${sql.ref(`t.${c}`)} = ${sql.ref(`v.${c}`)}`),
           sql` and `,
         )}
      returning v.n
    )
    insert into ${sql.table(table)} (${sql.join(['org_id', 'generation', ...columns].map((c) => sql.ref(c)))})
    select ${orgId}::text, ${generation}::int, ${sql.join(columns.map((c) => sql.ref(`v.${c}`)))} from v where v.n not in (select n from updated)
    on conflict (${sql.join(conflictKey(table).map((c) => sql.ref(c)))}) do update set ${sql.raw(partsAdded(table, 'excluded'))}`.execute(db);
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
    for (const table of ['rollup_days', 'rollup_org_days', 'rollup_day_lists'] as const) {
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

const partNames = ['count', 'sum', 'numerator', 'denominator'] as const;

/**
 * Parts of consecutive days by key (a statistic, a worker), added a row at a time. While rows
 * are added a key's parts are one array, part after part (a read of every worker adds 240,000
 * cells, and one array indexed by number is what adds them fastest).
 */
class DailyPartsByKey {
  private readonly all = new Map<string, Float64Array>();
  private readonly dayIndex: Map<string, number>;

  constructor(private readonly days: string[]) {
    this.dayIndex = new Map(days.map((day, i) => [day, i]));
  }

  /** The place of `day` in the range; undefined outside it (the queries ask for none there). */
  indexOf(day: string): number | undefined {
    return this.dayIndex.get(day);
  }

  /** Where `part` of day 0 is in a key's array. */
  offsetOf(part: keyof RollupParts): number {
    return partNames.indexOf(part) * this.days.length;
  }

  /** The array of `key`, zeros until added to. */
  of(key: string): Float64Array {
    let parts = this.all.get(key);
    if (!parts) {
      parts = new Float64Array(partNames.length * this.days.length);
      this.all.set(key, parts);
    }
    return parts;
  }

  /** Adds parts to day `d` of `key`: a worker has a row per pillar, and they add up. */
  add(key: string, d: number, row: RollupParts): void {
    const parts = this.of(key);
    for (const part of partNames) parts[this.offsetOf(part) + d] += row[part];
  }

  /** Each key's parts, by part. */
  byKey(): Map<string, DailyParts> {
    const n = this.days.length;
    const byKey = new Map<string, DailyParts>();
    for (const [key, all] of this.all) {
      byKey.set(key, { count: all.subarray(0, n), sum: all.subarray(n, 2 * n), numerator: all.subarray(2 * n, 3 * n), denominator: all.subarray(3 * n) });
    }
    return byKey;
  }
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
  const [from, to] = [q.days[0], q.days.at(-1)];
  const parts = new DailyPartsByKey(q.days);
  if (from === undefined || to === undefined || q.statisticIds.length === 0) return parts.byKey();
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
  for (const row of numeric(await query.execute())) {
    const d = parts.indexOf(row.day);
    if (d !== undefined) parts.add(row.statistic_id, d, row);
  }
  return parts.byKey();
}

/**
 * Every worker's parts of one statistic over `days` (consecutive, in order), summed over
 * pillars, by worker id; a worker without parts in the range is absent. Only the parts named
 * are read (the others stay 0): an answer's aggregation reads one to three of the four. With
 * `workerId`, that worker's only; with `workerIds`, those workers' only (a page of them).
 * A read of every worker, or of a page of them, takes the closed days' lists `cache` keeps,
 * and keeps those it reads: a page's workers are found in a kept list faster than the
 * database finds their rows.
 *
 * The database joins each day's rows into one string, so that a row per day crosses rather
 * than a row per (day, worker, pillar): handing rows to JavaScript one by one, not finding
 * them, is what a read of every worker costs (and summing pillars here, not in a grouped
 * subquery, halves the database's share). Rendering numbers as text is most of what is left
 * of the database's share, hence the parts named. Both databases render a double as text that
 * reads back to the same number (a test holds them to it); ids hold no space.
 */
export async function readWorkerDays(
  db: Executor,
  q: {
    orgId: string;
    generation: number;
    statisticId: string;
    days: string[];
    parts: readonly (keyof RollupParts)[];
    workerId?: string;
    workerIds?: string[];
  },
  cache?: DayListCache,
): Promise<Map<string, DailyParts>> {
  const [from, to] = [q.days[0], q.days.at(-1)];
  const parts = new DailyPartsByKey(q.days);
  if (from === undefined || to === undefined) return parts.byKey();
  if (q.workerIds?.length === 0) return parts.byKey();
  const days = q.workerId === undefined ? await listedDays(db, { ...q, from, to }, cache) : await daysOfOneWorker(db, { ...q, workerId: q.workerId, from, to });
  const offsets = q.parts.map((part) => parts.offsetOf(part));
  const stride = offsets.length;
  // A list holds every worker of its day: a page adds its own workers' values only.
  const wanted = q.workerIds && new Set(q.workerIds);
  // Days of the same workers share one list of them (workerDay): each worker's array is found once for all of them.
  let foundFor: string[] = [];
  let found: (Float64Array | undefined)[] = [];
  for (const { day, list } of days) {
    const d = parts.indexOf(day);
    if (d === undefined) continue;
    if (list.workers !== foundFor) {
      foundFor = list.workers;
      found = list.workers.map((key) => (wanted && !wanted.has(key) ? undefined : parts.of(key)));
    }
    const { values } = list;
    for (let w = 0, v = 0; w < found.length; w++, v += stride) {
      const into = found[w];
      if (into === undefined) continue;
      for (let p = 0; p < stride; p++) into[(offsets[p] as number) + d] += values[v + p] as number;
    }
  }
  return parts.byKey();
}

/**
 * A day's rows as the database joined them (joinedRows) or listed them; `before`, the day read
 * before it, lends its list of workers when this day has the same (the usual case), so that
 * the days share one.
 */
function workerDay(joined: string | null, stride: number, before: WorkerDay | undefined): WorkerDay {
  const tokens = joined === null ? [] : joined.split(' ');
  const n = tokens.length / (1 + stride);
  const workers: string[] = new Array(n);
  const values = new Float64Array(n * stride);
  let same = before !== undefined && before.workers.length === n;
  for (let w = 0, t = 0, v = 0; w < n; w++) {
    const key = tokens[t++] as string;
    workers[w] = key;
    if (same && before?.workers[w] !== key) same = false;
    for (let p = 0; p < stride; p++) values[v++] = Number(tokens[t++]);
  }
  return { workers: same && before ? before.workers : workers, values };
}

/** A day's rows joined into one text: each row's worker id, then its `parts`, separated by spaces. */
function joinedRows(parts: readonly (keyof RollupParts)[]) {
  const fields = [sql.ref('worker_id'), ...parts.map((part) => sql.ref(part))];
  return sql<string>`string_agg(${sql.join(fields, sql` || ' ' || `)}, ' ')`;
}

/** Each day's rows of one worker. */
async function daysOfOneWorker(
  db: Executor,
  q: { orgId: string; generation: number; statisticId: string; from: string; to: string; parts: readonly (keyof RollupParts)[]; workerId: string },
): Promise<{ day: string; list: WorkerDay }[]> {
  const rows = await db
    .selectFrom('rollup_days')
    .select(['day', joinedRows(q.parts).as('workers')])
    .where('org_id', '=', q.orgId)
    .where('generation', '=', q.generation)
    .where('statistic_id', '=', q.statisticId)
    .where('day', '>=', q.from)
    .where('day', '<=', q.to)
    .where('worker_id', '=', q.workerId)
    .groupBy('day')
    .orderBy('day')
    .execute();
  let before: WorkerDay | undefined;
  return rows.map((row) => ({ day: row.day, list: (before = workerDay(row.workers, q.parts.length, before)) }));
}

/** A day of one statistic in one generation. */
export interface StatisticDay {
  orgId: string;
  generation: number;
  statisticId: string;
  day: string;
}

/**
 * Every worker's rows of each day from `from` to `to` that has any: a day's
 * list while it holds (the same parts, made at the day's count), else its
 * rows joined now (of `workerIds` only, when given). The lists `cache` keeps
 * are named in the statement, which answers a kept one's tag alone when it
 * holds; the others it reads are kept.
 */
async function listedDays(
  db: Executor,
  q: ListScope & { from: string; to: string; workerIds?: string[] },
  cache: DayListCache | undefined,
): Promise<{ day: string; list: WorkerDay }[]> {
  const kept = cache?.within(q, q.from, q.to) ?? new Map<string, WorkerDay>();
  const same = (table: 'l' | 'r') => sql`${sql.ref(`${table}.org_id`)} = d.org_id and ${sql.ref(`${table}.generation`)} = d.generation
    and ${sql.ref(`${table}.statistic_id`)} = d.statistic_id and ${sql.ref(`${table}.day`)} = d.day`;
  const isKept = kept.size > 0 ? sql`l.tag in (${sql.join([...kept.keys()])})` : sql`1 = 0`;
  const ofWorkers = q.workerIds ? sql` and r.worker_id in (${sql.join(q.workerIds)})` : sql``;
  const { rows } = await sql<{ day: string; tag: string | null; workers: string | null }>`
    select d.day, l.tag, case when ${isKept} then null else coalesce(l.workers, (select ${joinedRows(q.parts)} from rollup_days r where ${same('r')}${ofWorkers})) end as workers
    from (
      select org_id, generation, statistic_id, day, sum(count) as stamp from rollup_org_days
      where org_id = ${q.orgId} and generation = ${q.generation} and statistic_id = ${q.statisticId} and day >= ${q.from} and day <= ${q.to}
      group by org_id, generation, statistic_id, day
    ) d
    left join rollup_day_lists l on ${same('l')} and l.stamp = d.stamp and l.parts = ${q.parts.join(',')}
    order by d.day`.execute(db);
  let before: WorkerDay | undefined;
  return rows.map(({ day, tag, workers }) => {
    const known = tag === null ? undefined : kept.get(tag);
    if (known && workers === null) return { day, list: (before = known) };
    const list = (before = workerDay(workers, q.parts.length, before));
    if (tag !== null) cache?.keep(q, day, tag, list);
    return { day, list };
  });
}

/**
 * Days before `before` of each organization's answering generation whose list is missing or no longer holds, up to
 * `limit`. A generation under recompute is left until it answers: its days change until the scan is past them.
 */
export async function unlistedDays(db: Executor, before: string, limit: number, orgIds?: string[]): Promise<StatisticDay[]> {
  if (orgIds?.length === 0) return [];
  const { rows } = await sql<{ org_id: string; generation: number; statistic_id: string; day: string }>`
    select d.org_id, d.generation, d.statistic_id, d.day
    from (
      select o.org_id, o.generation, o.statistic_id, o.day, sum(o.count) as stamp from rollup_org_days o
      join rollup_state s on s.org_id = o.org_id and s.generation = o.generation
      where o.day < ${before}${orgIds ? sql` and o.org_id in (${sql.join(orgIds)})` : sql``}
      group by o.org_id, o.generation, o.statistic_id, o.day
    ) d
    where not exists (
      select 1 from rollup_day_lists l
      where l.org_id = d.org_id and l.generation = d.generation and l.statistic_id = d.statistic_id and l.day = d.day and l.stamp = d.stamp
    )
    limit ${limit}`.execute(db);
  return rows.map((r) => ({ orgId: r.org_id, generation: r.generation, statisticId: r.statistic_id, day: r.day }));
}

/** Organizations with rollups whose id comes after `after`, in id order, up to `limit`. */
export async function rollupOrganizationsAfter(db: Executor, after: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('rollup_state').select('org_id').where('org_id', '>', after).orderBy('org_id').limit(limit).execute();
  return rows.map((r) => r.org_id);
}

/**
 * Lists the day's rows with the day's count, both as one statement sees them,
 * under a new tag (migration 010). On PostgreSQL the day's count rows are also locked (shared) until commit:
 * a deletion of the day (retention) then either waits and deletes the list
 * after it, or went first and leaves nothing to list, so that no list
 * outlives its day to match a count the day reaches again.
 */
export async function listDay(db: Executor, dialect: Dialect, key: StatisticDay, parts: readonly (keyof RollupParts)[]): Promise<void> {
  const of = (table: 'rollup_org_days' | 'rollup_days') => sql`${sql.table(table)} where org_id = ${key.orgId} and generation = ${key.generation}
    and statistic_id = ${key.statisticId} and day = ${key.day}`;
  await sql`
    insert into rollup_day_lists (org_id, generation, statistic_id, day, parts, stamp, workers, tag)
    select ${key.orgId}, ${key.generation}, ${key.statisticId}, ${key.day}, ${parts.join(',')},
      (select sum(count) from ${of('rollup_org_days')}), (select ${joinedRows(parts)} from ${of('rollup_days')}), ${randomBytes(12).toString('base64url')}
    where exists (select 1 from ${of('rollup_org_days')}${dialect === 'postgres' ? sql` for share` : sql``})
    on conflict (org_id, generation, statistic_id, day) do update set parts = excluded.parts, stamp = excluded.stamp, workers = excluded.workers, tag = excluded.tag`.execute(db);
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
    const deleteDays = async (table: 'rollup_days' | 'rollup_org_days' | 'rollup_day_lists') =>
      Number((await db.deleteFrom(table).where('org_id', '=', orgId).where('generation', '=', generation).where('statistic_id', '=', statistic_id).where('day', '<', day).executeTakeFirst()).numDeletedRows);
    deleted += (await deleteDays('rollup_days')) + (await deleteDays('rollup_org_days'));
    // The lists after the rows (see listDay); a list is the day's rows again, not more of them.
    await deleteDays('rollup_day_lists');
  }
  return deleted;
}

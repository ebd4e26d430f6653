import type { Schema } from '../contract/types';
import type { Selectable } from 'kysely';
import type { EventKind, EventsTable, Executor } from './schema';
import type { MetricEntry } from './snapshots';

type EventRow = Selectable<EventsTable>;

/** An app as the console names it (the contract's App). */
export type AppRef = Schema<'App'>;

/** One row of the timeline: an accepted event or a snapshot, with its app and worker. */
export interface TimelineEntry {
  id: string;
  kind: EventKind;
  integrationId: string;
  app: AppRef;
  worker: { id: string; displayName: string };
  /** The eventType, or the snapshotType of a snapshot. */
  type: string;
  category?: string;
  timestamp: string;
  receivedAt: string;
  duration?: number;
  pillar?: string;
  statisticId?: string;
  metadata?: Record<string, unknown>;
  /** A snapshot's metrics, in the order sent. */
  metrics?: MetricEntry[];
  requestId: string;
}

/** What selects timeline rows; instants are UTC ISO text, `from` inclusive, `to` exclusive. */
export interface TimelineFilter {
  orgId: string;
  from?: string;
  to?: string;
  /** A worker of `orgId` (the caller has checked): its rows are read through the worker's index. */
  workerId?: string;
  appId?: string;
  /** eventType, or snapshotType for snapshots. */
  type?: string;
  category?: string;
  kind?: EventKind;
}

/** (timestamp, id) of the last row of the previous page. */
export type TimelineKey = [ts: string, id: string];

/**
 * One keyset page of the timeline, newest first (ts, then id, both descending).
 * A worker filter reads the (worker_id, ts, id) index alone: with org_id also
 * in the condition, SQLite (which has no statistics) may pick the organization's
 * index and walk all of it.
 */
export async function timelinePage(db: Executor, filter: TimelineFilter, after: TimelineKey | undefined, limit: number): Promise<TimelineEntry[]> {
  let query = db.selectFrom('events').selectAll();
  query = filter.workerId ? query.where('worker_id', '=', filter.workerId) : query.where('org_id', '=', filter.orgId);
  if (filter.from) query = query.where('ts', '>=', filter.from);
  if (filter.to) query = query.where('ts', '<', filter.to);
  if (filter.appId) query = query.where('app_id', '=', filter.appId);
  if (filter.type) query = query.where('event_type', '=', filter.type);
  if (filter.category) query = query.where('category', '=', filter.category);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  if (after) query = query.where(({ eb, refTuple, tuple }) => eb(refTuple('ts', 'id'), '<', tuple(after[0], after[1])));
  const rows = await query.orderBy('ts', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return withNames(db, rows);
}

/** A worker's group on one day: how many rows, the latest timestamp. */
export interface WorkerDayGroup {
  workerId: string;
  count: number;
  latestAt: string;
}

/** (latestAt, workerId) of the last group of the previous page. */
export type GroupKey = [latestAt: string, workerId: string];

/** Groups in page order: the most recently active first, then by worker id, both descending. */
function descending(a: GroupKey, b: GroupKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? 1 : -1;
  return a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : 0;
}

/**
 * The workers with rows in [from, to), the most recently active first (then by
 * id, descending), `limit` of them after `after`. Counts are read for those only.
 */
export async function workerGroups(
  db: Executor,
  orgId: string,
  range: { from: string; to: string },
  after: GroupKey | undefined,
  limit: number,
): Promise<WorkerDayGroup[]> {
  const latest = (await latestFromNewestRows(db, orgId, range, after, limit)) ?? (await latestOfEveryWorker(db, orgId, range));
  const rows = latest
    .filter((key) => !after || descending(key, after) > 0)
    .sort(descending)
    .slice(0, limit);
  if (rows.length === 0) return [];
  const counts = await db
    .selectFrom('events')
    .select(({ fn }) => ['worker_id', fn.countAll<number | string>().as('n')])
    .where(
      'worker_id',
      'in',
      rows.map(([, workerId]) => workerId),
    )
    .where('ts', '>=', range.from)
    .where('ts', '<', range.to)
    .groupBy('worker_id')
    .execute();
  const countOf = new Map(counts.map((c) => [c.worker_id, Number(c.n)]));
  return rows.map(([latestAt, workerId]) => ({ workerId, count: countOf.get(workerId) ?? 0, latestAt }));
}

/** Rows read per step of the walk, and at most in all before the walk gives up. */
const WALK_CHUNK = 500;
const WALK_BUDGET = 5000;

/**
 * Each worker's latest row, found by walking the organization's rows of the range
 * newest first through its (org_id, ts, id) index: a worker's first row met is its
 * latest. A page is known once `limit` groups past `after` are strictly newer than
 * the last row read (a worker not met yet is at most that new). Usually a few
 * hundred rows; undefined when WALK_BUDGET rows were not enough (a deep page, or a
 * day dominated by a few workers).
 */
async function latestFromNewestRows(
  db: Executor,
  orgId: string,
  range: { from: string; to: string },
  after: GroupKey | undefined,
  limit: number,
): Promise<GroupKey[] | undefined> {
  const latestOf = new Map<string, string>();
  let position: TimelineKey | undefined;
  for (let walked = 0; walked < WALK_BUDGET; walked += WALK_CHUNK) {
    let query = db
      .selectFrom('events')
      .select(['worker_id', 'ts', 'id'])
      .where('org_id', '=', orgId)
      .where('ts', '>=', range.from)
      .where('ts', '<', range.to);
    if (position) {
      const [ts, id] = position;
      query = query.where(({ eb, refTuple, tuple }) => eb(refTuple('ts', 'id'), '<', tuple(ts, id)));
    }
    const rows = await query.orderBy('ts', 'desc').orderBy('id', 'desc').limit(WALK_CHUNK).execute();
    for (const row of rows) if (!latestOf.has(row.worker_id)) latestOf.set(row.worker_id, row.ts);
    const keys = [...latestOf].map(([workerId, ts]): GroupKey => [ts, workerId]);
    const last = rows.at(-1);
    if (!last || rows.length < WALK_CHUNK) return keys;
    const page = keys.filter((key) => !after || descending(key, after) > 0).sort(descending);
    const boundary = page[limit - 1];
    if (boundary && boundary[0] > last.ts) return keys;
    position = [last.ts, last.id];
  }
  return undefined;
}

/**
 * Each worker's latest row, one backward step in the (worker_id, ts, id) index per
 * worker of the organization: work that follows the number of workers, whatever
 * the number of rows that day.
 */
async function latestOfEveryWorker(db: Executor, orgId: string, range: { from: string; to: string }): Promise<GroupKey[]> {
  // Read whole (one row per worker) and paged by the caller: a derived table filtered on the
  // subquery's value makes SQLite run the subquery twice per worker.
  const all = await db
    .selectFrom('workers as w')
    .select((eb) => [
      'w.id',
      eb
        .selectFrom('events as e')
        .select('e.ts')
        .whereRef('e.worker_id', '=', 'w.id')
        .where('e.ts', '>=', range.from)
        .where('e.ts', '<', range.to)
        .orderBy('e.ts', 'desc')
        .limit(1)
        .as('latest'),
    ])
    .where('w.org_id', '=', orgId)
    .execute();
  return all.flatMap((w): GroupKey[] => (w.latest ? [[w.latest, w.id]] : []));
}

/** The newest `perWorker` rows in [from, to) of each of these workers, newest first per worker. */
export async function newestRowsPerWorker(
  db: Executor,
  workerIds: string[],
  range: { from: string; to: string },
  perWorker: number,
): Promise<Map<string, TimelineEntry[]>> {
  const byWorker = new Map<string, TimelineEntry[]>(workerIds.map((id) => [id, []]));
  if (workerIds.length === 0) return byWorker;
  // Ranked on the (worker_id, ts, id) index alone, then only the kept rows are read.
  const ranked = await db
    .selectFrom(
      db
        .selectFrom('events')
        .select(({ fn }) => [
          'id',
          fn
            .agg<number>('row_number', [])
            .over((over) => over.partitionBy('worker_id').orderBy('ts', 'desc').orderBy('id', 'desc'))
            .as('rank'),
        ])
        .where('worker_id', 'in', workerIds)
        .where('ts', '>=', range.from)
        .where('ts', '<', range.to)
        .as('ranked'),
    )
    .select('id')
    .where('rank', '<=', perWorker)
    .execute();
  if (ranked.length === 0) return byWorker;
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where(
      'id',
      'in',
      ranked.map((r) => r.id),
    )
    .orderBy('worker_id')
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .execute();
  for (const entry of await withNames(db, rows)) byWorker.get(entry.worker.id)?.push(entry);
  return byWorker;
}

/** Rows as timeline entries, named: their apps and workers read once per page, by id. */
async function withNames(db: Executor, rows: EventRow[]): Promise<TimelineEntry[]> {
  if (rows.length === 0) return [];
  const appIds = [...new Set(rows.map((r) => r.app_id))];
  const workerIds = [...new Set(rows.map((r) => r.worker_id))];
  const [apps, workers] = await Promise.all([
    db.selectFrom('apps').select(['id', 'slug', 'name']).where('id', 'in', appIds).execute(),
    db.selectFrom('workers').select(['id', 'display_name']).where('id', 'in', workerIds).execute(),
  ]);
  const appById = new Map(apps.map((a) => [a.id, a]));
  const nameById = new Map(workers.map((w) => [w.id, w.display_name]));
  return rows.map((row) => toEntry(row, appById.get(row.app_id), nameById.get(row.worker_id)));
}

/** The one place where a stored row becomes a timeline entry. */
function toEntry(row: EventRow, app: AppRef | undefined, workerName: string | undefined): TimelineEntry {
  const entry: TimelineEntry = {
    id: row.id,
    kind: row.kind,
    integrationId: row.integration_id,
    // Apps and workers are never deleted while their rows exist; the fallbacks keep a row readable if one were.
    app: app ? { id: app.id, slug: app.slug, name: app.name } : { id: row.app_id, slug: row.integration_id.replace(/^custom:/, ''), name: '' },
    worker: { id: row.worker_id, displayName: workerName ?? '' },
    type: row.event_type,
    timestamp: row.ts,
    receivedAt: row.received_at,
    requestId: row.request_id,
  };
  if (row.category !== null) entry.category = row.category;
  if (row.duration !== null) entry.duration = Number(row.duration);
  if (row.pillar !== null) entry.pillar = row.pillar;
  if (row.statistic_id !== null) entry.statisticId = row.statistic_id;
  if (row.metadata !== null) entry.metadata = JSON.parse(row.metadata) as Record<string, unknown>;
  if (row.metrics !== null) entry.metrics = JSON.parse(row.metrics) as MetricEntry[];
  return entry;
}

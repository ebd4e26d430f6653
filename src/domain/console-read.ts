// The console's read side: the timeline, its day grouped per worker, the
// workers directory, a worker with its user strip, and snapshot history.
// Every list is a keyset page with a signed cursor bound to the organization
// and the filters; another organization's ids match nothing.
import type { Query, Reply, Schema } from '../contract/types';
import type { DayListCache } from '../data/day-list-cache';
import { timeZoneOf } from '../data/organizations';
import type { Executor } from '../data/schema';
import { userStrip } from '../data/snapshots';
import { newestRowsPerWorker, timelinePage, workerGroups, type TimelineEntry, type TimelineFilter } from '../data/timeline';
import { hasWorker, searchWorkers, workerProfile } from '../data/worker-directory';
import { workersById } from '../data/workers';
import { ApiError } from '../errors';
import type { CursorCodec, CursorScope } from './cursor';
import { normalizeTimestamp } from './judgement';
import { dayRange, today } from './local-day';
import { stripMetric } from './metric-order';

export interface ReadContext {
  db: Executor;
  cursors: CursorCodec;
  /** The closed days' lists this process parsed, for reads of every worker's daily rollups. */
  dayLists: DayListCache;
}

export const DEFAULT_LIMIT = 50;
const ROWS_PER_GROUP = 5;

/** The filters the timeline and its export share. */
export type TimelineQuery = Omit<Query<'listTimeline'>, 'limit' | 'cursor'>;

function limitOf(query: { limit?: number }): number {
  // The contract middleware has checked the range; Express may still hand it over as text.
  return query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
}

/** `from` and `to` as UTC text, `from` not after `to`; 400 invalid_query naming the parameter otherwise. */
function instantRange(query: { from?: string; to?: string }): { from?: string; to?: string } {
  const normalize = (name: 'from' | 'to') => {
    const value = query[name];
    if (value === undefined) return undefined;
    const instant = normalizeTimestamp(value, new Date());
    if (!instant) throw new ApiError('invalid_query', `${name} must be a real date-time with offset within the years 0000 to 9999 (UTC)`);
    return instant;
  };
  const from = normalize('from');
  const to = normalize('to');
  if (from && to && from > to) throw new ApiError('invalid_query', 'from must not be after to');
  return { from, to };
}

/** The stored filter for a timeline query; undefined when it names a worker the organization does not have. */
async function timelineFilter(ctx: ReadContext, orgId: string, query: TimelineQuery): Promise<TimelineFilter | undefined> {
  const { from, to } = instantRange(query);
  if (query.workerId && !(await hasWorker(ctx.db, orgId, query.workerId))) return undefined;
  return {
    orgId,
    from,
    to,
    workerId: query.workerId,
    appId: query.appId,
    type: query.eventType,
    category: query.category,
    kind: query.kind,
  };
}

function timelineScope(orgId: string, filter: TimelineQuery): CursorScope {
  const { from, to } = instantRange(filter);
  const { workerId, appId, eventType, category, kind } = filter;
  return { orgId, list: 'timeline', filters: { from, to, workerId, appId, eventType, category, kind } };
}

/** The position a cursor of `scope` holds, as (ts, id) or alike; undefined without a cursor. */
const entryKey = (e: TimelineEntry) => [e.timestamp, e.id];

/** GET /timeline: one page of the organization's rows, newest first. */
export async function timeline(ctx: ReadContext, orgId: string, query: Query<'listTimeline'>): Promise<Reply<'listTimeline', 200>> {
  const limit = limitOf(query);
  const scope = timelineScope(orgId, query);
  const after = await ctx.cursors.after(scope, query.cursor);
  const filter = await timelineFilter(ctx, orgId, query);
  const fetched = filter ? await timelinePage(ctx.db, filter, after, limit + 1) : [];
  return ctx.cursors.page(scope, fetched, limit, entryKey, timelineRow);
}

/** Every row matching the timeline's filters, newest first, read `pageSize` at a time. */
export async function* timelineExport(
  ctx: ReadContext,
  orgId: string,
  query: TimelineQuery,
  pageSize = 1000,
): AsyncGenerator<Schema<'TimelineRow'>[]> {
  const filter = await timelineFilter(ctx, orgId, query);
  if (!filter) return;
  let after: [string, string] | undefined;
  for (;;) {
    const entries = await timelinePage(ctx.db, filter, after, pageSize);
    if (entries.length > 0) yield entries.map(timelineRow);
    const last = entries.at(-1);
    if (!last || entries.length < pageSize) return;
    after = [last.timestamp, last.id];
  }
}

/** GET /timeline/workers: a day in the organization's time zone, grouped per worker. */
export async function timelineDay(
  ctx: ReadContext,
  orgId: string,
  query: Query<'listTimelineWorkers'>,
): Promise<Reply<'listTimelineWorkers', 200>> {
  const limit = limitOf(query);
  const timeZone = (await timeZoneOf(ctx.db, orgId)) ?? 'UTC';
  const day = query.day ?? today(timeZone);
  const range = dayRange(day, timeZone);
  const scope: CursorScope = { orgId, list: 'timeline-day', filters: { day } };
  const after = await ctx.cursors.after(scope, query.cursor);
  const groups = await workerGroups(ctx.db, orgId, range, after, limit + 1);
  const shown = groups.slice(0, limit).map((g) => g.workerId);
  const [names, rows] = await Promise.all([workersById(ctx.db, orgId, shown), newestRowsPerWorker(ctx.db, shown, range, ROWS_PER_GROUP)]);
  const { items, nextCursor } = await ctx.cursors.page(
    scope,
    groups,
    limit,
    (g) => [g.latestAt, g.workerId],
    (g) => ({
      worker: names.get(g.workerId) ?? { id: g.workerId, displayName: '' },
      count: g.count,
      latestAt: g.latestAt,
      rows: (rows.get(g.workerId) ?? []).map(timelineRow),
    }),
  );
  return { day, timeZone, items, nextCursor };
}

/** GET /workers: the directory, by name, optionally narrowed by a prefix. */
export async function workers(ctx: ReadContext, orgId: string, query: Query<'listWorkers'>): Promise<Reply<'listWorkers', 200>> {
  const limit = limitOf(query);
  const q = query.q?.toLowerCase();
  const scope: CursorScope = { orgId, list: 'workers', filters: { q } };
  const after = await ctx.cursors.after(scope, query.cursor);
  const found = await searchWorkers(ctx.db, orgId, q, after, limit + 1);
  return ctx.cursors.page(
    scope,
    found,
    limit,
    (w) => [w.nameLower, w.id],
    ({ nameLower: _order, ...worker }) => worker,
  );
}

/** GET /workers/{workerId}: the worker, its externalIds, connections and user strip. */
export async function worker(ctx: ReadContext, orgId: string, workerId: string): Promise<Reply<'getWorker', 200>> {
  const profile = await workerProfile(ctx.db, orgId, workerId);
  if (!profile) throw new ApiError('worker_not_found', 'No worker with this id in the organization.');
  const strip = await userStrip(ctx.db, workerId);
  return {
    ...profile,
    strip: strip.map((card) => ({
      app: card.app,
      snapshotType: card.snapshotType,
      timestamp: card.timestamp,
      metrics: card.metrics.map(stripMetric),
    })),
  };
}

/** GET /workers/{workerId}/snapshots: every snapshot of the worker, newest first, superseded ones included. */
export async function snapshotHistory(
  ctx: ReadContext,
  orgId: string,
  workerId: string,
  query: Query<'listWorkerSnapshots'>,
): Promise<Reply<'listWorkerSnapshots', 200>> {
  const limit = limitOf(query);
  const { from, to } = instantRange(query);
  const scope: CursorScope = {
    orgId,
    list: 'snapshots',
    filters: { workerId, appId: query.appId, snapshotType: query.snapshotType, from, to },
  };
  const after = await ctx.cursors.after(scope, query.cursor);
  if (!(await hasWorker(ctx.db, orgId, workerId))) throw new ApiError('worker_not_found', 'No worker with this id in the organization.');
  const filter: TimelineFilter = { orgId, workerId, from, to, appId: query.appId, type: query.snapshotType, kind: 'snapshot' };
  const fetched = await timelinePage(ctx.db, filter, after, limit + 1);
  return ctx.cursors.page(scope, fetched, limit, entryKey, (e) => {
    const item: Schema<'SnapshotHistoryItem'> = {
      id: e.id,
      app: e.app,
      snapshotType: e.type,
      timestamp: e.timestamp,
      receivedAt: e.receivedAt,
      metrics: (e.metrics ?? []).map(stripMetric),
    };
    if (e.metadata !== undefined) item.metadata = e.metadata;
    return item;
  });
}

/** A timeline entry as the contract shows it: absent values omitted, metrics in the strip's form. */
export function timelineRow(e: TimelineEntry): Schema<'TimelineRow'> {
  const row: Schema<'TimelineRow'> = {
    id: e.id,
    kind: e.kind,
    integrationId: e.integrationId,
    app: e.app,
    worker: e.worker,
    timestamp: e.timestamp,
    receivedAt: e.receivedAt,
    requestId: e.requestId,
  };
  if (e.kind === 'snapshot') row.snapshotType = e.type;
  else row.eventType = e.type;
  if (e.category !== undefined) row.category = e.category;
  if (e.duration !== undefined) row.duration = e.duration;
  if (e.pillar !== undefined) row.pillar = e.pillar;
  if (e.statisticId !== undefined) row.statisticId = e.statisticId;
  if (e.metadata !== undefined) row.metadata = e.metadata;
  if (e.metrics !== undefined) row.metrics = e.metrics.map(stripMetric);
  return row;
}

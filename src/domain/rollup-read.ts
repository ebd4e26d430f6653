// The read side of the daily rollups: the statistics with their state, the
// daily values per organization or per worker, and the summary per pillar.
// Every answer comes from one generation (the one that answers), so two
// manifests or two time zones never mix in it.
import type { Query, Schema } from '../contract/types';
import { timeZoneOf } from '../data/organizations';
import {
  compareNames,
  frozenStatistics,
  manifestsOfOrg,
  oldestWaiting,
  readDayParts,
  readPillarParts,
  readState,
  readWorkerDays,
  type AppManifest,
  type DailyParts,
  type Definition,
} from '../data/rollups';
import type { RollupParts, RollupStateTable } from '../data/schema';
import { hasWorker } from '../data/worker-directory';
import { countWorkers, workersById } from '../data/workers';
import { ApiError } from '../errors';
import type { ReadContext } from './console-read';
import { emptyParts, partsOfAggregation, valueOf, type Aggregation } from './rollup-rules';

const MAX_DAYS = 366;
const DAY_MS = 86_400_000;
const FIRST_DAY_MS = Date.parse('0000-01-01T00:00:00Z');
const DEFAULT_WORKERS = 100;
const pillarOrder: Schema<'StatisticPillar'>[] = ['ACTIVITY', 'COMMUNICATION', 'DELIVERY', 'REVIEW', 'KNOWLEDGE'];
const dimensionOrder = ['satisfaction', 'performance', 'activity', 'communication', 'efficiency'] as const;

interface Statistic {
  app: AppManifest['app'];
  definition: Definition;
}

/** What answers for the organization: its generation, the zone of its days, and each statistic's status. */
interface Answering {
  generation: number;
  timeZone: string;
  status(statisticId: string): Schema<'RollupStatus'>;
}

async function answering(ctx: ReadContext, orgId: string): Promise<Answering> {
  const state: RollupStateTable | undefined = await readState(ctx.db, orgId);
  if (state && state.target_generation !== null) {
    const frozen = frozenStatistics(state);
    return {
      generation: state.generation,
      timeZone: state.time_zone,
      status: (id) => ({ state: 'recomputing', computedThrough: frozen.has(id) ? state.frozen_at : null }),
    };
  }
  const computedThrough = (await oldestWaiting(ctx.db, orgId)) ?? new Date().toISOString();
  return {
    // Before any batch was added there is no generation yet: 0 has no rows.
    generation: state?.generation ?? 0,
    timeZone: state?.time_zone ?? (await timeZoneOf(ctx.db, orgId)) ?? 'UTC',
    status: () => ({ state: 'current', computedThrough }),
  };
}

function statisticsOf(manifests: AppManifest[]): Statistic[] {
  return manifests.flatMap(({ app, definitions }) => definitions.map((definition) => ({ app, definition })));
}

/** The statistics named (in that order), or all of them; 400 invalid_query for one the organization does not have. */
function pick(all: Statistic[], ids: string[] | undefined, byDefault: (s: Statistic) => boolean): Statistic[] {
  if (ids === undefined) return all.filter(byDefault);
  return [...new Set(ids)].map((id) => {
    const found = all.find((s) => s.definition.id === id);
    if (!found) throw new ApiError('invalid_query', `statisticId "${id}" is not a statistic of the organization`);
    return found;
  });
}

/** Every day from `from` to `to`, both included; 400 invalid_query when `to` is before `from` or the range too long. */
function daysOf(from: string, to: string): string[] {
  const count = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (count < 1) throw new ApiError('invalid_query', 'to must not be before from');
  if (count > MAX_DAYS) throw new ApiError('invalid_query', `to must be at most ${MAX_DAYS} days from from (both included)`);
  return Array.from({ length: count }, (_, i) => shift(from, i));
}

async function requireWorker(ctx: ReadContext, orgId: string, workerId: string | undefined): Promise<void> {
  if (workerId !== undefined && !(await hasWorker(ctx.db, orgId, workerId))) {
    throw new ApiError('worker_not_found', 'No worker with this id in the organization.');
  }
}

/** A value with its parts, as the contract shapes it: numerator and denominator for a ratio only. */
export function rollupValue(aggregation: Aggregation, parts: RollupParts, days: number): Schema<'RollupValue'> {
  const value = valueOf(aggregation, parts, days);
  return aggregation === 'ratio'
    ? { value, count: parts.count, numerator: parts.numerator, denominator: parts.denominator }
    : { value, count: parts.count };
}

/** GET /api/v1/console/statistics */
export async function rollupStatistics(ctx: ReadContext, orgId: string): Promise<Schema<'RollupStatisticList'>> {
  const now = await answering(ctx, orgId);
  return {
    items: statisticsOf(await manifestsOfOrg(ctx.db, orgId)).map(({ app, definition }) => ({
      app,
      definition,
      status: now.status(definition.id),
    })),
  };
}

/**
 * The answer of /statistics/daily as parts, for `dailyStatisticsJson` to write: every worker's
 * answer is 240,000 day objects, too many to build before writing them.
 */
export interface DailyAnswer {
  header: Omit<Schema<'DailyStatistics'>, 'items'>;
  /** Every day of the range, in order: index d of each series' parts. */
  days: string[];
  statistics: DailyStatistic[];
  /** The items in order: per row (a worker's, or the organization's without one) a series per statistic, in order. */
  rows: { worker?: Schema<'WorkerRef'>; parts: (DailyParts | undefined)[] }[];
}

/** What a series says of its statistic; its days and total are derived from the parts. */
export type DailyStatistic = Omit<Schema<'DailySeries'>, 'days' | 'total' | 'worker'>;

/**
 * Told each statistic's days of workers (the `s`th of the answer's statistics) as soon as they
 * are read, when every worker read is on the page: to write their series while the next are read.
 */
export type OnWorkerDays = (s: number, statistic: DailyStatistic, days: string[], byWorker: Map<string, DailyParts>) => void;

/** GET /api/v1/console/statistics/daily */
export async function dailyStatistics(
  ctx: ReadContext,
  orgId: string,
  query: Query<'getDailyStatistics'>,
  onWorkerDays?: OnWorkerDays,
): Promise<DailyAnswer> {
  const days = daysOf(query.from, query.to);
  const picked = pick(statisticsOf(await manifestsOfOrg(ctx.db, orgId)), query.statisticId, () => true);
  await requireWorker(ctx, orgId, query.workerId);
  const now = await answering(ctx, orgId);
  const statistics = picked.map(({ app, definition }) => ({
    statisticId: definition.id,
    app,
    label: definition.label,
    pillar: definition.pillar,
    format: definition.format,
    aggregation: definition.aggregation,
    status: now.status(definition.id),
  }));
  const answer = (rows: DailyAnswer['rows'], nextCursor: string | null): DailyAnswer => ({
    header: { timeZone: now.timeZone, from: query.from, to: query.to, nextCursor },
    days,
    statistics,
    rows,
  });
  const where = { orgId, generation: now.generation, workerId: query.workerId };
  const [first] = statistics;
  if (query.groupBy !== 'worker' || !first) {
    const parts = await readDayParts(ctx.db, { ...where, statisticIds: statistics.map((s) => s.statisticId), days });
    return answer([{ parts: statistics.map((s) => parts.get(s.statisticId)) }], null);
  }

  const limit = query.limit === undefined ? DEFAULT_WORKERS : Number(query.limit);
  const scope = {
    orgId,
    list: 'statistics/daily',
    filters: {
      from: query.from,
      to: query.to,
      statisticId: query.statisticId?.join('\n'),
      workerId: query.workerId,
      groupBy: query.groupBy,
    },
  };
  const offset = query.cursor === undefined ? 0 : Number((await ctx.cursors.read(scope, query.cursor, 1))[0]);
  const daysOfWorkers = async (s: number, workerIds: string[] | undefined, allOnPage: boolean) => {
    const statistic = statistics[s];
    const byWorker = await readWorkerDays(
      ctx.db,
      { ...where, statisticId: statistic.statisticId, days, parts: partsOfAggregation[statistic.aggregation], workerIds },
      ctx.dayLists,
    );
    if (allOnPage) onWorkerDays?.(s, statistic, days, byWorker);
    return byWorker;
  };
  const others = statistics.slice(1).map((_, i) => i + 1);
  // A page that holds every worker needs every statistic of all of them: all are read at once.
  const everyone = offset + limit >= (await countWorkers(ctx.db, orgId));
  const [ofFirst, ...ofOthers] = await Promise.all([0, ...(everyone ? others : [])].map((s) => daysOfWorkers(s, undefined, everyone)));
  const rankOf = (workerId: string): Ranked => {
    const total = totalOf(ofFirst.get(workerId));
    return { workerId, value: valueOf(first.aggregation, total, days.length), count: total.count };
  };
  const ranked = [...ofFirst.keys()].map(rankOf).sort(byRank);
  // A worker with days of the other statistics only ranks as an empty total does. A page that ends before the first
  // worker ranked no better than that holds none of them: the others' days are read for its workers only. Any
  // other page reads every worker's days of the others, which tell the workers that have none of the first.
  const empty = rankOf('');
  const ahead = ranked.findIndex((w) => byTotal(w, empty) >= 0);
  let parts: Map<string, DailyParts>[];
  if (!everyone && offset + limit < (ahead === -1 ? ranked.length : ahead)) {
    const workerIds = ranked.slice(offset, offset + limit).map((w) => w.workerId);
    parts = [ofFirst, ...(await Promise.all(others.map((s) => daysOfWorkers(s, workerIds, true))))];
  } else {
    parts = [ofFirst, ...(everyone ? ofOthers : await Promise.all(others.map((s) => daysOfWorkers(s, undefined, false))))];
    const withoutFirst = new Set(parts.flatMap((byWorker) => [...byWorker.keys()].filter((id) => !ofFirst.has(id))));
    ranked.push(...[...withoutFirst].map(rankOf));
    ranked.sort(byRank);
  }
  const page = ranked.slice(offset, offset + limit).map((w) => w.workerId);
  const names = await workersById(ctx.db, orgId, page);
  const rows = page.map((workerId) => ({
    worker: names.get(workerId) ?? { id: workerId, displayName: '' },
    parts: parts.map((byWorker) => byWorker.get(workerId)),
  }));
  const nextCursor = offset + limit < ranked.length ? await ctx.cursors.issue(scope, [String(offset + limit)]) : null;
  return answer(rows, nextCursor);
}

/** A worker's place in the ranking: the first statistic's total value and count. */
interface Ranked {
  workerId: string;
  value: number | null;
  count: number;
}

/** Workers by the first statistic's total value (null last), then its count; 0 for totals that rank alike. */
function byTotal(a: Ranked, b: Ranked): number {
  return (a.value === null ? 1 : 0) - (b.value === null ? 1 : 0) || (b.value ?? 0) - (a.value ?? 0) || b.count - a.count;
}

/** Workers by their totals (byTotal), then id. */
function byRank(a: Ranked, b: Ranked): number {
  return byTotal(a, b) || compareNames(a.workerId, b.workerId);
}

/** Parts over a range summed, day by day in order (none: zeros). */
export function totalOf(daily: DailyParts | undefined): RollupParts {
  const total = emptyParts();
  if (!daily) return total;
  for (let i = 0; i < daily.count.length; i++) {
    total.count += daily.count[i];
    total.sum += daily.sum[i];
    total.numerator += daily.numerator[i];
    total.denominator += daily.denominator[i];
  }
  return total;
}

/** GET /api/v1/console/reports/summary */
export async function summaryReport(ctx: ReadContext, orgId: string, query: Query<'getSummaryReport'>): Promise<Schema<'SummaryReport'>> {
  const days = daysOf(query.from, query.to);
  if (Date.parse(`${query.from}T00:00:00Z`) - days.length * DAY_MS < FIRST_DAY_MS) {
    throw new ApiError('invalid_query', 'from is too early: the range of the same length before it would start before 0000-01-01');
  }
  const previous = { from: shift(query.from, -days.length), to: shift(query.from, -1) };
  const statistics = pick(statisticsOf(await manifestsOfOrg(ctx.db, orgId)), query.statisticId, (s) => s.definition.defaultEnabled);
  await requireWorker(ctx, orgId, query.workerId);
  const now = await answering(ctx, orgId);
  const read = async (range: { from: string; to: string }) => {
    if (statistics.length === 0) return new Map<string, RollupParts>();
    const rows = await readPillarParts(ctx.db, {
      orgId,
      generation: now.generation,
      statisticIds: statistics.map((s) => s.definition.id),
      ...range,
      workerId: query.workerId,
    });
    return new Map(rows.map((r) => [`${r.statistic_id}\u0000${r.pillar}`, r]));
  };
  const [current, before] = [await read(query), await read(previous)];
  const pillars = pillarOrder.flatMap((pillar) => {
    const listed = statistics.filter(({ definition }) => {
      const key = `${definition.id}\u0000${pillar}`;
      return definition.pillar === pillar || current.has(key) || before.has(key);
    });
    if (listed.length === 0) return [];
    return [
      {
        pillar,
        statistics: listed.map(({ app, definition }) => {
          const key = `${definition.id}\u0000${pillar}`;
          return {
            statisticId: definition.id,
            app,
            label: definition.label,
            format: definition.format,
            aggregation: definition.aggregation,
            status: now.status(definition.id),
            total: rollupValue(definition.aggregation, current.get(key) ?? emptyParts(), days.length),
            previousTotal: rollupValue(definition.aggregation, before.get(key) ?? emptyParts(), days.length),
          };
        }),
      },
    ];
  });
  const dimensions = dimensionOrder.flatMap((dimension) => {
    const statisticIds = statistics.filter((s) => s.definition.feedsDimensions.includes(dimension)).map((s) => s.definition.id);
    return statisticIds.length === 0 ? [] : [{ dimension, statisticIds }];
  });
  return { timeZone: now.timeZone, from: query.from, to: query.to, previous, pillars, dimensions };
}

function shift(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

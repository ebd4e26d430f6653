// The read side of the daily rollups: the statistics with their state, the
// daily values per organization or per worker, and the summary per pillar.
// Every answer comes from one generation (the one that answers), so two
// manifests or two time zones never mix in it.
import type { Query, Schema } from '../contract/types';
import { timeZoneOf } from '../data/organizations';
import {
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
import { workersById } from '../data/workers';
import { ApiError } from '../errors';
import type { ReadContext } from './console-read';
import { emptyParts, sumInto, valueOf } from './rollup-rules';

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
function rollupValue(definition: Definition, parts: RollupParts, days: number): Schema<'RollupValue'> {
  const value = valueOf(definition.aggregation, parts, days);
  return definition.aggregation === 'ratio'
    ? { value, count: parts.count, numerator: parts.numerator, denominator: parts.denominator }
    : { value, count: parts.count };
}

/** One day's value: a RollupValue with its day first, each object built whole so that all days share a shape. */
function rollupDay(definition: Definition, day: string, parts: RollupParts): Schema<'RollupDay'> {
  const value = valueOf(definition.aggregation, parts, 1);
  return definition.aggregation === 'ratio'
    ? { day, value, count: parts.count, numerator: parts.numerator, denominator: parts.denominator }
    : { day, value, count: parts.count };
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

/** GET /api/v1/console/statistics/daily */
export async function dailyStatistics(
  ctx: ReadContext,
  orgId: string,
  query: Query<'getDailyStatistics'>,
): Promise<Schema<'DailyStatistics'>> {
  const days = daysOf(query.from, query.to);
  const statistics = pick(statisticsOf(await manifestsOfOrg(ctx.db, orgId)), query.statisticId, () => true);
  await requireWorker(ctx, orgId, query.workerId);
  const now = await answering(ctx, orgId);
  const header = { timeZone: now.timeZone, from: query.from, to: query.to };
  const where = { orgId, generation: now.generation, workerId: query.workerId };
  const [first] = statistics;
  if (query.groupBy !== 'worker' || !first) {
    const parts = await readDayParts(ctx.db, { ...where, statisticIds: statistics.map((s) => s.definition.id), days });
    return { ...header, items: statistics.map((s) => series(s, now, days, parts.get(s.definition.id))), nextCursor: null };
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
  const ofFirst = await readWorkerDays(ctx.db, { ...where, statisticId: first.definition.id, days });
  const rankOf = (workerId: string): Ranked => {
    const total = totalOf(ofFirst.get(workerId));
    return { workerId, value: valueOf(first.definition.aggregation, total, days.length), count: total.count };
  };
  const ranked = [...ofFirst.keys()].map(rankOf).sort(byRank);
  // A worker with days of the other statistics only ranks as an empty total does. A page that ends before the first
  // worker ranked no better than that holds none of them: the others' days are read for its workers only. Any
  // other page reads every worker's days of the others, which tell the workers that have none of the first.
  const empty = rankOf('');
  const ahead = ranked.findIndex((w) => byTotal(w, empty) >= 0);
  const rest = statistics.slice(1);
  let parts: Map<string, DailyParts>[];
  if (offset + limit < (ahead === -1 ? ranked.length : ahead)) {
    const workerIds = ranked.slice(offset, offset + limit).map((w) => w.workerId);
    parts = [
      ofFirst,
      ...(await Promise.all(rest.map((s) => readWorkerDays(ctx.db, { ...where, statisticId: s.definition.id, days, workerIds })))),
    ];
  } else {
    parts = [ofFirst, ...(await Promise.all(rest.map((s) => readWorkerDays(ctx.db, { ...where, statisticId: s.definition.id, days }))))];
    const withoutFirst = new Set(parts.flatMap((byWorker) => [...byWorker.keys()].filter((id) => !ofFirst.has(id))));
    ranked.push(...[...withoutFirst].map(rankOf));
    ranked.sort(byRank);
  }
  const page = ranked.slice(offset, offset + limit).map((w) => w.workerId);
  const names = await workersById(ctx.db, orgId, page);
  const items: Schema<'DailySeries'>[] = [];
  for (const workerId of page) {
    const worker = names.get(workerId) ?? { id: workerId, displayName: '' };
    statistics.forEach((statistic, s) => {
      items.push({ ...series(statistic, now, days, parts[s]?.get(workerId)), worker });
    });
  }
  const nextCursor = offset + limit < ranked.length ? await ctx.cursors.issue(scope, [String(offset + limit)]) : null;
  return { ...header, items, nextCursor };
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
  return byTotal(a, b) || (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0);
}

/** A statistic's series: its value on each of `days` from the parts of that day (none: 0), and its total. */
function series({ app, definition }: Statistic, now: Answering, days: string[], parts: DailyParts | undefined): Schema<'DailySeries'> {
  const total = emptyParts();
  const cell = emptyParts();
  const daily: Schema<'RollupDay'>[] = new Array(days.length);
  for (let i = 0; i < days.length; i++) {
    partsOn(parts, i, cell);
    sumInto(total, cell);
    daily[i] = rollupDay(definition, days[i], cell);
  }
  return {
    statisticId: definition.id,
    app,
    label: definition.label,
    pillar: definition.pillar,
    format: definition.format,
    aggregation: definition.aggregation,
    status: now.status(definition.id),
    days: daily,
    total: rollupValue(definition, total, days.length),
  };
}

/** Day `i` of `daily` into `into` (none: zeros); one object reused over a series rather than one per day. */
function partsOn(daily: DailyParts | undefined, i: number, into: RollupParts): void {
  into.count = daily?.count[i] ?? 0;
  into.sum = daily?.sum[i] ?? 0;
  into.numerator = daily?.numerator[i] ?? 0;
  into.denominator = daily?.denominator[i] ?? 0;
}

/** A worker's parts summed over the range. */
function totalOf(daily: DailyParts | undefined): RollupParts {
  const total = emptyParts();
  const cell = emptyParts();
  for (let i = 0; i < (daily?.count.length ?? 0); i++) {
    partsOn(daily, i, cell);
    sumInto(total, cell);
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
            total: rollupValue(definition, current.get(key) ?? emptyParts(), days.length),
            previousTotal: rollupValue(definition, before.get(key) ?? emptyParts(), days.length),
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

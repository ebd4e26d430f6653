import { CELL_KEY, compareNames, NameList, type Definition, type PackedCells } from '../data/rollups';
import type { RollupParts } from '../data/schema';
import { dateOfDay, localDayNumber } from './local-day';

// The rules of the specification's "Daily rollups", one place each: which
// events count for a definition, what parts one event adds, and the value
// derived from parts. Parts, not values, are stored: sums and counts add up
// over any range of days, workers or pillars, where finished values (a ratio,
// a rate) would not.

export type Aggregation = Definition['aggregation'];

/** What of a stored event the rollups read. */
export interface RollupEvent {
  workerId: string;
  /** The instant of its stored timestamp (ms). */
  instant: number;
  eventType: string;
  category: string | null;
  statisticId: string | null;
  duration: number | null;
  pillar: string | null;
  /** The metadata object as sent, parsed; null when none. */
  metadata: unknown;
}

/**
 * An event counts for a definition of its app's manifest when it names the
 * definition; one naming none counts by its type and category, unless the
 * definition is owned by an extractor (then only events naming it count).
 * Only those three fields of the event decide: `matching` remembers its answers by them.
 */
export function matches(definition: Definition, event: RollupEvent): boolean {
  if (event.statisticId !== null) return event.statisticId === definition.id;
  if (definition.ownedBy === 'extractor') return false;
  return (
    definition.sourceEventTypes.includes(event.eventType) &&
    event.category !== null &&
    (definition.sourceEventCategories as string[]).includes(event.category)
  );
}

/** What `matches` reads of an event, and the definitions of a manifest that it matches. */
interface MatchedKinds {
  byStatistic: Map<string | null, Definition[]>;
  /** By type, then category, for the events that name no statistic. */
  byType: Map<string, Map<string | null, Definition[]>>;
}

// Summing asks which definitions every event matches, and a manifest's events come in few kinds: the answer is
// remembered per manifest (a drain's rules hold each app's definitions as one array) and per kind of event.
// make bench-summing: 1.16-1.20 ms per 1,000 events against 1.27-1.37 asking each definition (three rounds in turn).
const matchedByManifest = new WeakMap<Definition[], MatchedKinds>();

/** The definitions of `definitions` that `event` counts for (matches), in their order. */
function matching(definitions: Definition[], event: RollupEvent): Definition[] {
  if (definitions.length === 0) return definitions;
  let kinds = matchedByManifest.get(definitions);
  if (!kinds) matchedByManifest.set(definitions, (kinds = { byStatistic: new Map(), byType: new Map() }));
  let ofKind: Map<string | null, Definition[]>;
  let kind: string | null;
  if (event.statisticId !== null) {
    ofKind = kinds.byStatistic;
    kind = event.statisticId;
  } else {
    let ofType = kinds.byType.get(event.eventType);
    if (!ofType) kinds.byType.set(event.eventType, (ofType = new Map()));
    ofKind = ofType;
    kind = event.category;
  }
  let matched = ofKind.get(kind);
  if (!matched) ofKind.set(kind, (matched = definitions.filter((definition) => matches(definition, event))));
  return matched;
}

/** Adds what one matching event adds to the parts at `at` of `parts` (count, sum, numerator, denominator). */
function addPartsAt(parts: Float64Array, at: number, definition: Definition, event: RollupEvent): void {
  parts[at] += 1;
  switch (definition.aggregation) {
    case 'sumField': {
      const value = fieldOf(event.metadata, definition.valueField);
      if (typeof value === 'number' && Number.isFinite(value)) parts[at + 1] += value;
      break;
    }
    case 'durationMinutes':
      parts[at + 1] += event.duration ?? 0;
      break;
    case 'ratio': {
      const value = fieldOf(event.metadata, definition.valueField);
      if (typeof value === 'boolean') {
        parts[at + 2] += value ? 1 : 0;
        parts[at + 3] += 1;
      } else if (typeof value === 'number' && Number.isFinite(value)) {
        parts[at + 2] += value;
        parts[at + 3] += 1;
      }
      break;
    }
    case 'count':
    case 'rate':
      break;
  }
}

/** The pillar an event's parts count under in reports: its own, else its definition's. */
export function pillarOf(definition: Definition, event: RollupEvent): string {
  return event.pillar ?? definition.pillar;
}

/**
 * The value of parts summed over `days` days. durationMinutes sums seconds
 * (the events' `duration`); rate is events per day; ratio is null without a value.
 */
export function valueOf(aggregation: Aggregation, parts: RollupParts, days: number): number | null {
  switch (aggregation) {
    case 'count':
      return parts.count;
    case 'sumField':
      return parts.sum;
    case 'durationMinutes':
      return parts.sum / 60;
    case 'rate':
      return parts.count / days;
    case 'ratio':
      return parts.denominator === 0 ? null : parts.numerator / parts.denominator;
  }
}

// The keys of each dotted path read, split once: a valueField is read for every event summed.
const pathKeys = new Map<string, string[]>();

/** `metadata[path]`, where a dotted path walks into nested objects (own properties only). */
function fieldOf(metadata: unknown, path: string | undefined): unknown {
  if (path === undefined) return undefined;
  let keys = pathKeys.get(path);
  if (!keys) {
    keys = path.split('.');
    pathKeys.set(path, keys);
  }
  let value = metadata;
  for (const key of keys) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** The parts an aggregation's answers carry: `count` always, and what its value is derived from. */
export const partsOfAggregation: Record<Aggregation, readonly (keyof RollupParts)[]> = {
  count: ['count'],
  rate: ['count'],
  sumField: ['count', 'sum'],
  durationMinutes: ['count', 'sum'],
  ratio: ['count', 'numerator', 'denominator'],
};

export function emptyParts(): RollupParts {
  return { count: 0, sum: 0, numerator: 0, denominator: 0 };
}

// Cells a new accumulator has room for; it doubles as it needs.
const INITIAL_CELLS = 1024;

/**
 * Sums the parts of events into cells, per statistic, worker, day and pillar,
 * packed as a drain adds them (PackedCells). A drain of make bench's ingest
 * makes tens of thousands of cells: as objects, each kept through two seconds
 * of scavenges and then packed, the process promoted 37 MB summing 600,000
 * events between other work, against 31.5 packed (--trace-gc-nvp, two runs
 * each); the summing's CPU the same.
 */
export class PartsAccumulator {
  private readonly names = new NameList();
  // By worker, then local day (a number), then a short list of cells: one lookup by a string an event, where by
  // date and then worker (and the date itself by day number) were three, with each cell's names compared through
  // the packed keys. Summing make bench's events parsed anew, with other work between batches as in the service
  // (three bodies parsed between each 100 events), rounds of both in turn in one process: 0.79-0.85 of the time
  // before in five runs; without the other work 0.79-1.03 in eight (docs/performance-history.md, 2026-11-30 11:46).
  private readonly workers = new Map<string, WorkerCells>();
  /** Per cell: its statistic, worker, day and pillar, as indexes into names. */
  private keys = new Uint32Array(INITIAL_CELLS * 4);
  /** Per cell: count, sum, numerator, denominator. */
  private parts = new Float64Array(INITIAL_CELLS * 4);
  private size = 0;

  /** Adds `event` (of an app whose manifest is `definitions`) to every definition it matches. */
  add(definitions: Definition[], event: RollupEvent, timeZone: string): void {
    const matched = matching(definitions, event);
    if (matched.length === 0) return;
    let worker = this.workers.get(event.workerId);
    if (!worker) this.workers.set(event.workerId, (worker = { name: this.names.indexOf(event.workerId), days: [] }));
    const day = this.dayOf(worker, localDayNumber(event.instant, timeZone));
    for (const definition of matched) {
      // The cell first: making it may replace this.parts with a larger array.
      const cell = this.cellOf(worker, day, definition.id, pillarOf(definition, event));
      addPartsAt(this.parts, cell * 4, definition, event);
    }
  }

  /**
   * The cells in key order (statistic, day, worker, pillar): concurrent writers lock rows in the same order.
   * Ordered by four stable counting passes over the ranks of their names, the least significant key first: the
   * 49,000 cells of 72,000 of make bench's events (a drain's) took 20-31 ms put in order list by list, sorting each
   * worker's cells of a day, and 6.5-12 so (medians of 12 rounds, five runs each); that time holds the HTTP thread
   * in one piece.
   */
  take(): PackedCells {
    const rank = ranksByName(this.names.list);
    let order: Uint32Array = new Uint32Array(this.size);
    for (let cell = 0; cell < this.size; cell++) order[cell] = cell;
    for (const k of [CELL_KEY.pillar, CELL_KEY.worker, CELL_KEY.day, CELL_KEY.statistic]) order = sortedByKey(order, this.keys, k, rank);
    const keys = new Uint32Array(this.size * 4);
    const parts = new Float64Array(this.size * 4);
    for (let to = 0; to < order.length; to++) {
      const from = (order[to] ?? 0) * 4;
      for (let k = 0; k < 4; k++) {
        keys[to * 4 + k] = this.keys[from + k] ?? 0;
        parts[to * 4 + k] = this.parts[from + k] ?? 0;
      }
    }
    return { names: this.names.list, keys, parts };
  }

  /** The worker's cells on local day `number`, added when it has none yet. */
  private dayOf(worker: WorkerCells, number: number): DayCells {
    for (const day of worker.days) if (day.number === number) return day;
    const day = { number, name: this.names.indexOf(dateOfDay(number)), names: [], cells: [] };
    worker.days.push(day);
    return day;
  }

  /** The cell of the worker's on a day for the statistic and pillar, added when it has none yet. */
  private cellOf(worker: WorkerCells, day: DayCells, statisticId: string, pillar: string): number {
    const { names, cells } = day;
    for (let i = 0; i < cells.length; i++) {
      if (names[2 * i] === statisticId && names[2 * i + 1] === pillar) return cells[i] ?? 0;
    }
    if (this.size * 4 === this.keys.length) this.grow();
    const cell = this.size++;
    this.keys[cell * 4 + CELL_KEY.statistic] = this.names.indexOf(statisticId);
    this.keys[cell * 4 + CELL_KEY.worker] = worker.name;
    this.keys[cell * 4 + CELL_KEY.day] = day.name;
    this.keys[cell * 4 + CELL_KEY.pillar] = this.names.indexOf(pillar);
    names.push(statisticId, pillar);
    cells.push(cell);
    return cell;
  }

  private grow(): void {
    const keys = new Uint32Array(this.keys.length * 2);
    keys.set(this.keys);
    this.keys = keys;
    const parts = new Float64Array(this.parts.length * 2);
    parts.set(this.parts);
    this.parts = parts;
  }
}

/**
 * A worker's cells in a PartsAccumulator, by local day, looked through in turn: a worker's events in a drain
 * fall on few days (a backfill of a year for one worker makes each event look through up to 365).
 */
interface WorkerCells {
  /** The worker's id, as an index into the accumulator's names. */
  name: number;
  days: DayCells[];
}

interface DayCells {
  /** The local day as days since 1970-01-01, and its date as an index into the accumulator's names. */
  number: number;
  name: number;
  /** Per cell its statistic and pillar, in a row: compared in place rather than through the packed keys. */
  names: string[];
  /**
   * The cells: at most the definitions of the organization's apps (32 a manifest) times the pillars used.
   */
  cells: number[];
}

/** Each name's place among `names` in code-unit order (compareNames). */
function ranksByName(names: string[]): Uint32Array {
  const rank = new Uint32Array(names.length);
  [...names.keys()]
    .sort((a, b) => compareNames(names[a] ?? '', names[b] ?? ''))
    .forEach((index, place) => {
      rank[index] = place;
    });
  return rank;
}

/** The cells of `order`, stably ordered by the rank of their key `k`: a counting sort. */
function sortedByKey(order: Uint32Array, keys: Uint32Array, k: number, rank: Uint32Array): Uint32Array {
  const starts = new Uint32Array(rank.length + 1);
  for (const cell of order) starts[(rank[keys[cell * 4 + k] ?? 0] ?? 0) + 1] += 1;
  for (let r = 1; r < starts.length; r++) starts[r] = (starts[r] ?? 0) + (starts[r - 1] ?? 0);
  const sorted = new Uint32Array(order.length);
  for (const cell of order) {
    const r = rank[keys[cell * 4 + k] ?? 0] ?? 0;
    sorted[starts[r] ?? 0] = cell;
    starts[r] = (starts[r] ?? 0) + 1;
  }
  return sorted;
}

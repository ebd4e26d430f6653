import type { Definition } from '../data/rollups';
import type { RollupParts } from '../data/schema';
import { localDate } from './local-day';

// The rules of the specification's "Daily rollups", one place each: which
// events count for a definition, what parts one event adds, and the value
// derived from parts. Parts, not values, are stored: sums and counts add up
// over any range of days, workers or pillars, where finished values (a ratio,
// a rate) would not.

export type Aggregation = Definition['aggregation'];

/** What of a stored event the rollups read. */
export interface RollupEvent {
  workerId: string;
  ts: string;
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

/** Adds to `parts` what one matching event adds. */
export function addPartsOf(parts: RollupParts, definition: Definition, event: RollupEvent): void {
  parts.count += 1;
  switch (definition.aggregation) {
    case 'sumField': {
      const value = fieldOf(event.metadata, definition.valueField);
      if (typeof value === 'number' && Number.isFinite(value)) parts.sum += value;
      break;
    }
    case 'durationMinutes':
      parts.sum += event.duration ?? 0;
      break;
    case 'ratio': {
      const value = fieldOf(event.metadata, definition.valueField);
      if (typeof value === 'boolean') {
        parts.numerator += value ? 1 : 0;
        parts.denominator += 1;
      } else if (typeof value === 'number' && Number.isFinite(value)) {
        parts.numerator += value;
        parts.denominator += 1;
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

/** One row of parts: a statistic's, for a worker, a day and a pillar. */
export interface PartsCell extends RollupParts {
  statisticId: string;
  workerId: string;
  day: string;
  pillar: string;
}

/** Sums the parts of events into cells, per statistic, worker, day and pillar. */
export class PartsAccumulator {
  // By day, then worker, then a short list. Dates are shared strings (localDate), hashed once; a key
  // joining day and worker was a new string to hash, looked up in a map of every cell, for every event:
  // that was most of what summing cost (measured). A list holds a cell per statistic and pillar the
  // worker had events for that day: at most the definitions of the organization's apps (32 a manifest)
  // times the pillars used.
  private readonly cells = new Map<string, Map<string, PartsCell[]>>();

  /** Adds `event` (of an app whose manifest is `definitions`) to every definition it matches. */
  add(definitions: Definition[], event: RollupEvent, timeZone: string): void {
    let day: string | undefined;
    let ofDayAndWorker: PartsCell[] | undefined;
    for (const definition of definitions) {
      if (!matches(definition, event)) continue;
      if (day === undefined || ofDayAndWorker === undefined) {
        day = localDate(Date.parse(event.ts), timeZone);
        let ofDay = this.cells.get(day);
        if (!ofDay) this.cells.set(day, (ofDay = new Map()));
        ofDayAndWorker = ofDay.get(event.workerId);
        if (!ofDayAndWorker) ofDay.set(event.workerId, (ofDayAndWorker = []));
      }
      const pillar = pillarOf(definition, event);
      addPartsOf(cellOf(ofDayAndWorker, definition.id, event.workerId, day, pillar), definition, event);
    }
  }

  /** The cells in key order (statistic, day, worker, pillar): concurrent writers lock rows in the same order. */
  take(): PartsCell[] {
    const cells: PartsCell[] = [];
    for (const ofDay of this.cells.values()) for (const ofDayAndWorker of ofDay.values()) cells.push(...ofDayAndWorker);
    return cells.sort(byKey);
  }
}

/** The cell of `cells` (a worker's on a day) for the statistic and pillar, added when it has none yet. */
function cellOf(cells: PartsCell[], statisticId: string, workerId: string, day: string, pillar: string): PartsCell {
  for (const cell of cells) if (cell.statisticId === statisticId && cell.pillar === pillar) return cell;
  // Written out, and found by a plain loop: a spread of emptyParts() and a closure per lookup cost summing a quarter more (measured).
  const cell: PartsCell = { statisticId, workerId, day, pillar, count: 0, sum: 0, numerator: 0, denominator: 0 };
  cells.push(cell);
  return cell;
}

function byKey(a: PartsCell, b: PartsCell): number {
  return compare(a.statisticId, b.statisticId) || compare(a.day, b.day) || compare(a.workerId, b.workerId) || compare(a.pillar, b.pillar);
}

/** Code-unit order, as SQLite and PostgreSQL's "C" collation compare. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Cells as they cross to a writer thread: each key an index into one list of
 * the names they use, the parts four numbers a cell. Cloning a few arrays
 * costs the two threads far less than cloning thousands of objects.
 */
export interface PackedCells {
  names: string[];
  /** Per cell: its statistic, worker, day and pillar, as indexes into names. */
  keys: Uint32Array;
  /** Per cell: count, sum, numerator, denominator. */
  parts: Float64Array;
}

export function packCells(cells: PartsCell[]): PackedCells {
  const index = new Map<string, number>();
  const names: string[] = [];
  const indexOf = (name: string): number => {
    let i = index.get(name);
    if (i === undefined) {
      i = names.push(name) - 1;
      index.set(name, i);
    }
    return i;
  };
  const keys = new Uint32Array(cells.length * 4);
  const parts = new Float64Array(cells.length * 4);
  // Element by element: a drain packs tens of thousands of cells, and two arrays made per cell to copy from cost
  // 7-11 ms per 40,000 cells against 4-5 (measured).
  let k = 0;
  for (const cell of cells) {
    keys[k] = indexOf(cell.statisticId);
    keys[k + 1] = indexOf(cell.workerId);
    keys[k + 2] = indexOf(cell.day);
    keys[k + 3] = indexOf(cell.pillar);
    parts[k] = cell.count;
    parts[k + 1] = cell.sum;
    parts[k + 2] = cell.numerator;
    parts[k + 3] = cell.denominator;
    k += 4;
  }
  return { names, keys, parts };
}

export function unpackCells({ names, keys, parts }: PackedCells): PartsCell[] {
  const name = (i: number): string => {
    const found = names[i];
    if (found === undefined) throw new Error(`packed cells name ${i} of ${names.length}`);
    return found;
  };
  const cells: PartsCell[] = new Array(keys.length / 4);
  for (let c = 0, k = 0; k < keys.length; c++, k += 4) {
    cells[c] = {
      statisticId: name(keys[k] ?? -1),
      workerId: name(keys[k + 1] ?? -1),
      day: name(keys[k + 2] ?? -1),
      pillar: name(keys[k + 3] ?? -1),
      count: parts[k] ?? 0,
      sum: parts[k + 1] ?? 0,
      numerator: parts[k + 2] ?? 0,
      denominator: parts[k + 3] ?? 0,
    };
  }
  return cells;
}

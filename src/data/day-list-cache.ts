import type { RollupParts } from './schema';

/** A day's rows of one statistic as a read of every worker adds them: each worker once, in order, with its parts. */
export interface WorkerDay {
  workers: string[];
  /** `parts.length` values a worker, in the order of `workers`. */
  values: Float64Array;
}

/** Whose days a list is of: an organization's statistic in one generation, listed with these parts. */
export interface ListScope {
  orgId: string;
  generation: number;
  statisticId: string;
  parts: readonly (keyof RollupParts)[];
}

interface Kept {
  scope: string;
  day: string;
  list: WorkerDay;
  size: number;
}

/**
 * Closed days' lists (src/data/migrations/008_day_lists.ts) as reads of every
 * worker parsed them, kept by tag. A tag's list never changes (migration 010),
 * so one kept is what the database holds under that tag; whether the tag still
 * holds for its day, the read asks in the statement that reads the days it
 * lacks. Bounded by the values and worker ids kept; the lists least recently
 * read go first. A read of 30 days of 8 statistics over 1,000 workers keeps
 * about 600,000.
 */
export class DayListCache {
  private readonly byTag = new Map<string, Kept>();
  /** By scope, each day's tag kept. */
  private readonly tags = new Map<string, Map<string, string>>();
  private size = 0;

  constructor(private readonly maxSize = 2_000_000) {}

  /** The lists kept of the scope's days from `from` to `to` (inclusive), by tag. */
  within(scope: ListScope, from: string, to: string): Map<string, WorkerDay> {
    const found = new Map<string, WorkerDay>();
    for (const [day, tag] of this.tags.get(scopeKey(scope)) ?? []) {
      const kept = this.byTag.get(tag);
      if (!kept || day < from || day > to) continue;
      // Read again: the last to go.
      this.byTag.delete(tag);
      this.byTag.set(tag, kept);
      found.set(tag, kept.list);
    }
    return found;
  }

  /** Keeps the list `tag` of the scope's `day`, in place of the one kept of that day before. */
  keep(scope: ListScope, day: string, tag: string, list: WorkerDay): void {
    const size = list.values.length + list.workers.length;
    if (size > this.maxSize) return;
    const key = scopeKey(scope);
    const before = this.tags.get(key)?.get(day);
    if (before !== undefined) this.drop(before);
    let days = this.tags.get(key);
    if (!days) this.tags.set(key, (days = new Map()));
    days.set(day, tag);
    this.byTag.set(tag, { scope: key, day, list, size });
    this.size += size;
    for (const [oldest] of this.byTag) {
      if (this.size <= this.maxSize) break;
      this.drop(oldest);
    }
  }

  /** How many lists are kept. */
  get lists(): number {
    return this.byTag.size;
  }

  private drop(tag: string): void {
    const kept = this.byTag.get(tag);
    if (!kept) return;
    this.byTag.delete(tag);
    this.size -= kept.size;
    const days = this.tags.get(kept.scope);
    if (days?.get(kept.day) === tag) days.delete(kept.day);
    if (days?.size === 0) this.tags.delete(kept.scope);
  }
}

function scopeKey({ orgId, generation, statisticId, parts }: ListScope): string {
  return `${orgId}\u0000${generation}\u0000${statisticId}\u0000${parts.join(',')}`;
}

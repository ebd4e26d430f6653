import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../data/db';
import { organizationIds } from '../data/organizations';
import { deleteExpiredEvents } from '../data/retention';
import { deleteRollupsBefore } from '../data/rollups';
import { metrics } from '../metrics';

const DAY_MS = 86_400_000;

/** How long rows are kept, in days (EVENT_RETENTION_DAYS, ROLLUP_RETENTION_DAYS); absent: forever. */
export interface RetentionDays {
  events?: number;
  rollups?: number;
}

/** `days` before `now` as a date, less `margin` days more. */
function dayBefore(now: Date, days: number, margin: number): string {
  return new Date(now.getTime() - (days + margin) * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The first calendar day that no sweep has touched, in any time zone: rollups of
 * earlier days may have lost their events (kept longer than them) or been swept
 * themselves. Undefined when nothing expires.
 */
export function firstWholeDay(retention: RetentionDays, now: Date = new Date()): string | undefined {
  const kept = [retention.events, retention.rollups].filter((d): d is number => d !== undefined);
  if (kept.length === 0) return undefined;
  // A local day starts at most 14 hours before, and 12 after, the same UTC date.
  return dayBefore(now, Math.min(...kept), -2);
}

export interface RetentionOptions {
  /** Rows per DELETE: small enough that one statement holds the SQLite writer (and the event loop) only briefly. */
  batchSize?: number;
  /** Between two sweeps. */
  intervalMs?: number;
  /**
   * After a batch that took t, wait t × this before the next: the sweep takes at most 1/(1+this) of
   * the time. On SQLite a batch also holds the event loop, so it costs ingest a little more than its share.
   */
  restFactor?: number;
}

/**
 * EVENT_RETENTION_DAYS: deletes timeline rows older than that, in the
 * background, in small batches with rests between them, so that ingestion
 * goes on at nearly full speed during a sweep. Rows are deleted by their `ts`
 * (the time the event happened, not when it arrived). Current snapshots and
 * their history rows stay, and so do the rollups: they keep their own
 * ROLLUP_RETENTION_DAYS, applied by the same sweep to days older than that
 * (and one more, so that no zone's day is cut short).
 */
export class RetentionSweeper {
  private readonly batchSize: number;
  private readonly intervalMs: number;
  private readonly restFactor: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopping = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly days: RetentionDays,
    private readonly logger: Logger,
    options: RetentionOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 1_000;
    this.intervalMs = options.intervalMs ?? 10 * 60_000;
    this.restFactor = options.restFactor ?? 19;
  }

  /** Sweeps now (after the first tick), then every interval. */
  start(firstAfterMs = 1_000): void {
    const tick = () => {
      this.running = this.sweep().catch((err: unknown) => {
        if (!this.stopping.signal.aborted) this.logger.warn({ err }, 'retention sweep failed; the next one will go on');
        return 0;
      });
      void this.running.then(() => {
        if (!this.stopping.signal.aborted) this.timer = setTimeout(tick, this.intervalMs).unref();
      });
    };
    this.timer = setTimeout(tick, firstAfterMs).unref();
  }

  /** Deletes every expired row as of `now`; resolves with how many went. */
  async sweep(now: Date = new Date()): Promise<number> {
    const { events, rollups } = this.days;
    const cutoff = events === undefined ? undefined : new Date(now.getTime() - events * DAY_MS).toISOString();
    const rollupDay = rollups === undefined ? undefined : dayBefore(now, rollups, 1);
    let total = 0;
    for (const orgId of await organizationIds(this.db.kysely)) {
      if (rollupDay) total += await deleteRollupsBefore(this.db.kysely, orgId, rollupDay);
      for (;;) {
        if (!cutoff || this.stopping.signal.aborted) break;
        const started = performance.now();
        const deleted = await deleteExpiredEvents(this.db, orgId, cutoff, this.batchSize);
        total += deleted;
        metrics.retentionDeleted.inc(deleted);
        if (deleted < this.batchSize) break;
        await sleep((performance.now() - started) * this.restFactor, undefined, { signal: this.stopping.signal }).catch(() => {});
      }
      if (this.stopping.signal.aborted) return total;
    }
    metrics.retentionLastSweep.set(now.getTime() / 1000);
    if (total > 0) this.logger.info({ deleted: total, cutoff, rollupDay }, 'retention sweep deleted expired rows');
    return total;
  }

  /** Stops the timer and waits for a sweep under way to end after its current batch. */
  async close(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.timer);
    await this.running;
  }
}

// The load generator's tally: every answer autocannon reports, counted into the warm-up or the measured run
// by when it arrived. One autocannon run covers both, so the measured run continues the warm-up's connections:
// autocannon builds its connections one after another before any answer is read (copying every request body
// into each, ~1.3 s for 50 connections of the bench's bodies), and times each connection's first request from
// its own construction, so the first answers of a run carry the load generator's start-up, not the server's.
import type { SlowAnswer } from './checkpoints';
import { percentile } from './stats';

/** The p99 target's bound (ms): the measured answers slower than this are kept with when they arrived. */
export const SLOW_MS = 100;

export interface LoadResult {
  seconds: number;
  requests: number;
  statusCounts: Record<string, number>;
  /** Status counts of the warm-up, which the service also stored. */
  warmupStatusCounts: Record<string, number>;
  /** Over the whole run, warm-up included: an error then is an error too. */
  errors: number;
  timeouts: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** The measured answers over SLOW_MS, with when they arrived. */
  slow: SlowAnswer[];
}

export class LoadRecord {
  private measuringSince: number | undefined;
  private readonly latencies: number[] = [];
  private readonly slow: SlowAnswer[] = [];
  private readonly statusCounts: Record<string, number> = {};
  private readonly warmupStatusCounts: Record<string, number> = {};

  /** The warm-up ends: answers from now on are the measured run's. `at` is a performance.now() reading. */
  startMeasuring(at: number): void {
    this.measuringSince = at;
  }

  /** An answer that took latencyMs arrived at endMs (epoch ms, comparable with the other processes' clocks). */
  response(statusCode: number, latencyMs: number, endMs = Date.now()): void {
    if (this.measuringSince === undefined) {
      count(this.warmupStatusCounts, statusCode);
      return;
    }
    count(this.statusCounts, statusCode);
    this.latencies.push(latencyMs);
    if (latencyMs > SLOW_MS) this.slow.push({ endMs, latencyMs });
  }

  /** The measured run's figures, once the run has ended at `until` (a performance.now() reading). */
  result(until: number, whole: { errors: number; timeouts: number }): LoadResult {
    const since = this.measuringSince ?? until;
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const ms = (value: number) => Math.round(value * 10) / 10;
    const sum = sorted.reduce((total, value) => total + value, 0);
    return {
      seconds: (until - since) / 1000,
      requests: sorted.length,
      statusCounts: { ...this.statusCounts },
      warmupStatusCounts: { ...this.warmupStatusCounts },
      errors: whole.errors,
      timeouts: whole.timeouts,
      latencyMs: {
        p50: ms(percentile(sorted, 50)),
        p90: ms(percentile(sorted, 90)),
        p99: ms(percentile(sorted, 99)),
        max: ms(sorted.at(-1) ?? 0),
        mean: sorted.length === 0 ? 0 : ms(sum / sorted.length),
      },
      slow: [...this.slow],
    };
  }
}

function count(counts: Record<string, number>, statusCode: number): void {
  counts[statusCode] = (counts[statusCode] ?? 0) + 1;
}

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Everything GET /metrics exposes. One registry per process, like the process
 * metrics it holds: several apps in one process (tests) add to the same series.
 * Labels take only values from fixed sets (route patterns, status codes, error
 * codes, window names): never keys, workers, organizations or raw URLs.
 *
 * Later work registers its own series here, e.g. the rollups:
 *   new Gauge({ name: 'ingest_rollup_lag_seconds', help: '…', registers: [registry], collect() { this.set(…) } })
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const registers = [registry];
const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const metrics = {
  rollupDelay: new Histogram({
    name: 'ingest_rollup_delay_seconds',
    help: 'From the commit of a batch of events (its outbox row) to the commit of its parts in the daily rollups.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 10, 30, 60, 300],
    registers,
  }),
  rollupRecomputed: new Counter({
    name: 'ingest_rollup_recomputed_events_total',
    help: 'Stored events counted again by recomputes (a replaced manifest, a new time zone).',
    registers,
  }),
  httpRequests: new Counter({
    name: 'ingest_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  }),
  httpDuration: new Histogram({
    name: 'ingest_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its answer, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: latencyBuckets,
    registers,
  }),
  eventsAccepted: new Counter({ name: 'ingest_events_accepted_total', help: 'Events stored.', registers }),
  eventsRejected: new Counter({
    name: 'ingest_events_rejected_total',
    help: 'Events of a batch rejected on their own, by error code.',
    labelNames: ['code'] as const,
    registers,
  }),
  snapshotsAccepted: new Counter({ name: 'ingest_snapshots_accepted_total', help: 'Snapshots stored.', registers }),
  batchSize: new Histogram({
    name: 'ingest_batch_size_events',
    help: 'Events per batch that reached the events handler.',
    buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    registers,
  }),
  rateLimited: new Counter({
    name: 'ingest_rate_limited_total',
    help: 'Requests refused with 429, by the full window (key or org).',
    labelNames: ['window'] as const,
    registers,
  }),
  quotaRefusals: new Counter({
    name: 'ingest_quota_refusals_total',
    help: "Batches refused whole with 402 quota_exceeded: the organization's month was already used up.",
    registers,
  }),
  idempotentReplays: new Counter({
    name: 'ingest_idempotent_replays_total',
    help: 'Stored answers replayed for a repeated Idempotency-Key.',
    registers,
  }),
  dbQueryDuration: new Histogram({
    name: 'ingest_db_query_duration_seconds',
    help: 'Time of each database query made through Kysely, by outcome (ok or error).',
    labelNames: ['outcome'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers,
  }),
  retentionDeleted: new Counter({
    name: 'ingest_retention_deleted_rows_total',
    help: 'Timeline rows deleted by the retention sweep.',
    registers,
  }),
  retentionLastSweep: new Gauge({
    name: 'ingest_retention_last_sweep_timestamp_seconds',
    help: 'When the retention sweep last went through all expired rows (Unix time).',
    registers,
  }),
};

/** A batch's events, counted once its transaction committed (a failed one stored nothing). */
export function countBatch(outcome: { accepted: unknown[]; rejected: Array<{ code: string }> }): void {
  metrics.eventsAccepted.inc(outcome.accepted.length);
  for (const { code } of outcome.rejected) metrics.eventsRejected.inc({ code });
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

const pools = new Set<() => PoolStats>();

/** Database connection pools report their use here while open; the gauge adds them up at scrape time. */
export function trackPool(stats: () => PoolStats): () => void {
  pools.add(stats);
  return () => pools.delete(stats);
}

new Gauge({
  name: 'ingest_db_pool_connections',
  help: 'Database connections: total open, idle, and requests waiting for one.',
  labelNames: ['state'] as const,
  registers,
  collect() {
    const sum: PoolStats = { total: 0, idle: 0, waiting: 0 };
    for (const stats of pools) {
      const s = stats();
      sum.total += s.total;
      sum.idle += s.idle;
      sum.waiting += s.waiting;
    }
    for (const [state, value] of Object.entries(sum)) this.set({ state }, value);
  },
});

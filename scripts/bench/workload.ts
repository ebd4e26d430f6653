// The benchmark's workload: a pool of distinct POST /api/v1/ingest/events bodies,
// and the event rows the service would store for them (for the raw-driver ceiling).
// Deterministic: the same seed gives the same pool, so two runs send the same bytes.
import { eventColumns as schemaEventColumns } from '../../src/data/schema';

/** Event types the benchmark app allows, each with the category (set B) it is sent with. */
export const eventKinds = [
  { eventType: 'ticket.resolved', category: 'TASK_UPDATE' },
  { eventType: 'build.finished', category: 'CODE_CHANGE' },
  { eventType: 'review.submitted', category: 'CODE_REVIEW' },
  { eventType: 'meeting.attended', category: 'MEETING' },
  { eventType: 'doc.edited', category: 'DOCUMENT' },
  { eventType: 'agent.task.completed', category: 'AI_TASK' },
] as const;

export const allowedEventTypes = eventKinds.map((k) => k.eventType);

const repos = ['acme/payments-api', 'acme/web-frontend', 'acme/infra', 'acme/mobile-app', 'acme/data-pipeline'];
const priorities = ['low', 'normal', 'high', 'urgent'];
const labels = ['backend', 'frontend', 'ops', 'security', 'ux', 'perf', 'docs', 'billing'];
const offsets = [0, 60, -300, 330, 540, -420, 120];

/** mulberry32: a small, fast, seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function externalIdOf(worker: number): string {
  return `bench-w-${String(worker).padStart(4, '0')}`;
}

/** ISO 8601 with a numeric offset (or Z), milliseconds included, as clients send it. */
function withOffset(utcMs: number, offsetMinutes: number): string {
  const local = new Date(utcMs + offsetMinutes * 60_000).toISOString().slice(0, 23);
  if (offsetMinutes === 0) return `${local}Z`;
  const sign = offsetMinutes > 0 ? '+' : '-';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

export interface BenchEvent {
  eventType: string;
  category: string;
  actor: { externalId: string };
  timestamp: string;
  duration: number;
  metadata: Record<string, unknown>;
}

export function makeEvent(random: () => number, workers: number, nowMs: number): BenchEvent {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const kind = pick(eventKinds);
  const worker = Math.floor(random() * workers);
  // Within the last 7 days, as a client flushing its queue would send them.
  const ts = nowMs - Math.floor(random() * 7 * 86_400_000);
  return {
    eventType: kind.eventType,
    category: kind.category,
    actor: { externalId: externalIdOf(worker) },
    timestamp: withOffset(ts, pick(offsets)),
    duration: Math.floor(random() * 3600),
    metadata: {
      repo: pick(repos),
      ref: `OPS-${1000 + Math.floor(random() * 9000)}`,
      priority: pick(priorities),
      labels: [pick(labels), pick(labels)],
      source: 'bench',
      attempt: 1 + Math.floor(random() * 3),
    },
  };
}

export interface Pool {
  /** Request bodies, each `{"events":[...]}` with `batch` events. */
  bodies: string[];
  /** The same events, parsed. */
  batches: BenchEvent[][];
  /** Average serialized size of one event, bytes. */
  eventBytes: number;
}

export function makePool(options: { bodies: number; batch: number; workers: number; seed: number; nowMs: number }): Pool {
  const random = prng(options.seed);
  const batches: BenchEvent[][] = [];
  const bodies: string[] = [];
  let eventBytes = 0;
  let events = 0;
  for (let b = 0; b < options.bodies; b++) {
    const batch: BenchEvent[] = [];
    for (let e = 0; e < options.batch; e++) {
      const event = makeEvent(random, options.workers, options.nowMs);
      eventBytes += Buffer.byteLength(JSON.stringify(event));
      events++;
      batch.push(event);
    }
    batches.push(batch);
    bodies.push(JSON.stringify({ events: batch }));
  }
  return { bodies, batches, eventBytes: Math.round(eventBytes / events) };
}

/** The columns of `events`, in the order the raw inserts bind them (the service's own definition). */
export const eventColumns = Object.keys(schemaEventColumns);

/** One row, in the order of `eventColumns`. */
export type EventTuple = [
  id: string,
  org_id: string,
  app_id: string,
  worker_id: string,
  integration_id: string,
  kind: string,
  event_type: string,
  category: string,
  ts: string,
  duration: number,
  pillar: null,
  statistic_id: null,
  metadata: string,
  metrics: null,
  request_id: string,
  received_at: string,
  batch_id: null,
];

/** What the service stores for an accepted event, minus the per-insert id, request id and receipt time. */
export interface RowTemplate {
  worker: number;
  eventType: string;
  category: string;
  ts: string;
  duration: number;
  metadata: string;
}

export function rowTemplates(pool: Pool, workers: number): RowTemplate[][] {
  return pool.batches.map((batch) =>
    batch.map((e) => ({
      worker: Number(e.actor.externalId.slice('bench-w-'.length)) % workers,
      eventType: e.eventType,
      category: e.category,
      // As the service normalizes it: UTC, Z.
      ts: new Date(Date.parse(e.timestamp)).toISOString(),
      duration: e.duration,
      metadata: JSON.stringify(e.metadata),
    })),
  );
}

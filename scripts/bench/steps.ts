// `make bench-steps`: what the HTTP thread's own steps of an ingest request cost, per 1,000 of make bench's
// events, each timed alone over make bench's bodies with the service's code: parsing the body, judging each
// event against the contract (its metadata serialized once, as stored), its timestamp in UTC, the batch's ids,
// PostgreSQL's statement parameters and the reply. The rollups' summing is `make bench-summing`'s. Together
// with the request's HTTP stack they are the floor of the HTTP thread's CPU per event.
// Options (environment): BENCH_STEPS_ROUNDS (10 passes over the bodies).
import { configuredDocument } from '../../src/contract/document';
import { ContractValidators, serializedJson } from '../../src/contract/validators';
import type { Schema } from '../../src/contract/types';
import { statementParameters } from '../../src/data/event-batch';
import { newIds } from '../../src/data/ids';
import { renderBatch } from '../../src/domain/event-ingest';
import { normalizeTimestamp } from '../../src/domain/judgement';
import { harness } from './harness';
import { numberEnv } from './targets';
import { makePool } from './workload';

const rounds = numberEnv('BENCH_STEPS_ROUNDS', 10);
const bench = harness('bench-steps');

const pool = makePool({ bodies: 200, batch: 100, workers: 1000, seed: 42, nowMs: Date.now() });
const bodies = pool.bodies.map((body) => Buffer.from(body));
const events = pool.batches.length * (pool.batches[0]?.length ?? 0);
const validate = new ContractValidators(configuredDocument({ eventCategorySet: 'B', ingestBatchLimit: 500 })).typed('IngestEvent');
const receivedAt = new Date();

/** Every body's events as judging hands them on: valid, each with its id, UTC timestamp and metadata text. */
function judged(batch: unknown[]) {
  const ids = newIds('evt', batch.length);
  return batch.map((item, index) => {
    const verdict = validate(item);
    if ('issue' in verdict) throw new Error(`make bench's event ${index} is invalid: ${verdict.issue.message}`);
    const event: Schema<'IngestEvent'> = verdict.value;
    const ts = normalizeTimestamp(event.timestamp, receivedAt) ?? receivedAt.toISOString();
    return { index, id: ids[index] as string, event, ts, metadataJson: serializedJson(event.metadata) };
  });
}

const parsed = bodies.map((body) => (JSON.parse(body.toString('utf8')) as { events: unknown[] }).events);
const candidates = parsed.map(judged);

const steps: Array<[string, (b: number) => unknown]> = [
  ['parsing the body (JSON.parse of its UTF-8 text)', (b) => JSON.parse((bodies[b] as Buffer).toString('utf8'))],
  ['judging each event against the contract', (b) => (parsed[b] as unknown[]).map((item) => validate(item))],
  ['its timestamp in UTC', (b) => (candidates[b] ?? []).map((c) => normalizeTimestamp(c.event.timestamp, receivedAt))],
  ["the batch's ids", (b) => newIds('evt', (candidates[b] ?? []).length)],
  [
    // With their UTF-8 lengths, which the driver takes first: a text JSON.stringify made is flattened then.
    "PostgreSQL's statement parameters",
    (b) => Object.values(statementParameters([candidates[b] ?? []])).map((text) => Buffer.byteLength(text)),
  ],
  [
    'the reply (202, every event accepted)',
    (b) => {
      const accepted = (candidates[b] ?? []).map(({ id, event, ts }) => ({ eventType: event.eventType, timestamp: ts, id }));
      return renderBatch({ requestId: 'req_bench', size: accepted.length, batchLimit: 500, baseUrl: 'http://localhost' }, { accepted, rejected: [], workerIds: [] });
    },
  ],
];

/** The median of the rounds after the first few, which warm the JIT. */
function warmMedian(ms: number[]): number {
  const warm = ms.slice(Math.min(3, ms.length - 1)).sort((a, b) => a - b);
  return warm[Math.floor(warm.length / 2)] ?? 0;
}

bench.run(async () => {
  console.log(`${bodies.length} bodies of ${pool.batches[0]?.length} events (~${pool.eventBytes} bytes each), ${rounds} rounds; ms per 1,000 events:`);
  let total = 0;
  for (const [label, step] of steps) {
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      for (let b = 0; b < bodies.length; b++) step(b);
      times.push(performance.now() - started);
    }
    const perThousand = (warmMedian(times) / events) * 1000;
    total += perThousand;
    console.log(`  ${perThousand.toFixed(2).padStart(6)}  ${label}`);
  }
  console.log(`  ${total.toFixed(2).padStart(6)}  together (and make bench-summing's summing for the rollups)`);
});

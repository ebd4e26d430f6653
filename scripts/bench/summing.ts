// `make bench-summing`: the CPU the rollups spend summing events into cells, the work every process does
// for the batches it commits (and a recompute on SQLite for every chunk): 600 batches of make bench's events
// under its manifest of 8 statistics, in the organization's zone, timed over repeated rounds, alone and between
// other work as in the service. Then what a drain costs for the cells its events make, by how many events it
// takes (a second of make bench's ingest is about 30,000): on the HTTP thread summing and taking them (packed),
// on SQLite's writer adding them to a store that holds them already, as in a steady ingest.
// Options (environment): BENCH_SUMMING_EVENTS (60000), BENCH_SUMMING_ROUNDS (10), BENCH_SUMMING_ZONE (Europe/Berlin),
// BENCH_SUMMING_DRAINS (events a drain takes, 30000,60000,90000).
import path from 'node:path';
import { sourceDocument } from '../../src/contract/document-source';
import { ContractValidators } from '../../src/contract/validators';
import { migrate, openDatabase } from '../../src/data/db';
import { addParts, type Definition } from '../../src/data/rollups';
import { normalizedInstant } from '../../src/domain/judgement';
import { PartsAccumulator, type RollupEvent } from '../../src/domain/rollup-rules';
import { harness } from './harness';
import { benchManifest } from './rollups';
import { numberEnv } from './targets';
import { makeEvent, prng } from './workload';

const events = numberEnv('BENCH_SUMMING_EVENTS', 60_000);
const rounds = numberEnv('BENCH_SUMMING_ROUNDS', 10);
const timeZone = process.env.BENCH_SUMMING_ZONE ?? 'Europe/Berlin';
const bench = harness('bench-summing');

/** make bench's manifest as the service stores it: defaults filled in, checked against the contract. */
function storedManifest(): Definition[] {
  const validators = new ContractValidators(sourceDocument());
  const stored = validators.typed('StoredStatisticDefinition');
  return benchManifest('bench', 'summing').map((definition) => {
    const checked = stored(validators.withDefaults('StatisticDefinition', definition));
    if ('issue' in checked) throw new Error(`the bench manifest is not a stored manifest: ${checked.issue.message}`);
    return checked.value;
  });
}

/** The workload's events as the rollups take them, each worker named by its externalId. */
function rollupEvents(count: number): RollupEvent[] {
  const random = prng(42);
  const now = new Date();
  return Array.from({ length: count }, (): RollupEvent => {
    const event = makeEvent(random, 1000, now.getTime());
    return {
      workerId: event.actor.externalId,
      instant: normalizedInstant(event.timestamp, now)?.ms ?? now.getTime(),
      eventType: event.eventType,
      category: event.category,
      statisticId: null,
      duration: event.duration,
      pillar: null,
      metadata: event.metadata,
    };
  });
}

const definitions = storedManifest();

/** `events` summed into cells (into `parts`, else new ones), as the service sums the batches it commits. */
function summed(events: RollupEvent[], parts = new PartsAccumulator()): PartsAccumulator {
  for (const event of events) parts.add(definitions, event, timeZone);
  return parts;
}

/** Milliseconds spent on `count` events, per 1,000 of them, as printed. */
function perThousand(ms: number, count: number): string {
  return ((ms / count) * 1000).toFixed(2);
}

/**
 * Summing as the service sums: its events parsed anew each round (strings not hashed yet), a batch of 100 at a
 * time with the HTTP thread's other work between them, imitated by parsing three bodies of 300 events. Only the
 * summing and the take are timed: caches the other work emptied make it cost about half as much again as alone.
 */
function timeSummingBetweenOtherWork(sample: RollupEvent[]): void {
  const text = JSON.stringify(sample);
  const body = JSON.stringify({ events: sample.slice(0, 300) });
  let parsed = 0;
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const fresh: RollupEvent[] = JSON.parse(text);
    const parts = new PartsAccumulator();
    let spent = 0;
    for (let start = 0; start < fresh.length; start += 100) {
      for (let k = 0; k < 3; k++) parsed += (JSON.parse(body) as { events: unknown[] }).events.length;
      const batch = fresh.slice(start, start + 100);
      const started = performance.now();
      summed(batch, parts);
      spent += performance.now() - started;
    }
    const started = performance.now();
    parts.take();
    times.push(spent + performance.now() - started);
  }
  const median = warmMedian(times);
  console.log(
    `between other work (${parsed.toLocaleString('en')} events parsed meanwhile): ${median.toFixed(1)} ms, ${perThousand(median, sample.length)} ms per 1,000 events`,
  );
}

/** Summing (and taking the cells in key order) of the sample's events, timed over the rounds. */
function timeSumming(sample: RollupEvent[]): void {
  const times: number[] = [];
  let cells = 0;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    cells = summed(sample).take().keys.length / 4;
    times.push(performance.now() - started);
  }
  const median = warmMedian(times);
  console.log(`summing ${events.toLocaleString('en')} events under ${definitions.length} statistics in ${timeZone} into ${cells.toLocaleString('en')} cells`);
  console.log(`rounds (ms): ${times.map((t) => t.toFixed(0)).join(', ')}`);
  console.log(`median after warm-up: ${median.toFixed(1)} ms, ${perThousand(median, events)} ms per 1,000 events`);
}

/** The median of the rounds after the first few, which warm the JIT and the zone's caches. */
function warmMedian(ms: number[]): number {
  const warm = ms.slice(Math.min(3, ms.length - 1)).sort((a, b) => a - b);
  return warm[Math.floor(warm.length / 2)] ?? 0;
}

/** A drain of `count` events, timed on each side over the rounds; the first round fills the store. */
async function timeDrains(count: number): Promise<void> {
  const drained = rollupEvents(count);
  const db = openDatabase({ kind: 'sqlite', path: path.join(bench.tmp, `drains-${count}.db`) });
  try {
    await migrate(db);
    const sending: number[] = [];
    const adding: number[] = [];
    let cells = 0;
    for (let round = 0; round < rounds; round++) {
      const started = performance.now();
      const packed = summed(drained).take();
      const packedAt = performance.now();
      await db.transaction((trx) => addParts(trx, 'org_bench', 1, packed));
      sending.push(packedAt - started);
      adding.push(performance.now() - packedAt);
      cells = packed.keys.length / 4;
    }
    console.log(
      `a drain of ${count.toLocaleString('en')} events, ${cells.toLocaleString('en')} cells (${(cells / count).toFixed(2)}/event): ` +
        `HTTP thread ${perThousand(warmMedian(sending), count)}, writer ${perThousand(warmMedian(adding), count)} ms per 1,000 events`,
    );
  } finally {
    await db.close();
  }
}

bench.run(async () => {
  const sample = rollupEvents(events);
  timeSumming(sample);
  timeSummingBetweenOtherWork(sample);
  for (const count of (process.env.BENCH_SUMMING_DRAINS ?? '30000,60000,90000').split(',').map(Number)) await timeDrains(count);
});

// `make bench-summing`: the CPU the rollups spend summing events into cells, the work every process does
// for the batches it commits (and a recompute on SQLite for every chunk): 600 batches of make bench's events
// under its manifest of 8 statistics, in the organization's zone, timed over repeated rounds.
// Options (environment): BENCH_SUMMING_EVENTS (60000), BENCH_SUMMING_ROUNDS (10), BENCH_SUMMING_ZONE (Europe/Berlin).
import { sourceDocument } from '../../src/contract/document-source';
import { ContractValidators } from '../../src/contract/validators';
import type { Definition } from '../../src/data/rollups';
import { normalizeTimestamp } from '../../src/domain/judgement';
import { PartsAccumulator, type RollupEvent } from '../../src/domain/rollup-rules';
import { benchManifest } from './rollups';
import { numberEnv } from './targets';
import { makeEvent, prng } from './workload';

const events = numberEnv('BENCH_SUMMING_EVENTS', 60_000);
const rounds = numberEnv('BENCH_SUMMING_ROUNDS', 10);
const timeZone = process.env.BENCH_SUMMING_ZONE ?? 'Europe/Berlin';

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
function rollupEvents(): RollupEvent[] {
  const random = prng(42);
  const now = new Date();
  return Array.from({ length: events }, (): RollupEvent => {
    const event = makeEvent(random, 1000, now.getTime());
    return {
      workerId: event.actor.externalId,
      ts: normalizeTimestamp(event.timestamp, now) ?? now.toISOString(),
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
const sample = rollupEvents();
const times: number[] = [];
let cells = 0;
for (let round = 0; round < rounds; round++) {
  const started = performance.now();
  const parts = new PartsAccumulator();
  for (const event of sample) parts.add(definitions, event, timeZone);
  cells = parts.take().length;
  times.push(performance.now() - started);
}
// The first rounds warm the JIT and the zone's caches: the figure is the median of the rest.
const warm = times.slice(Math.min(3, rounds - 1)).sort((a, b) => a - b);
const median = warm[Math.floor(warm.length / 2)] ?? 0;
console.log(`summing ${events.toLocaleString('en')} events under ${definitions.length} statistics in ${timeZone} into ${cells.toLocaleString('en')} cells`);
console.log(`rounds (ms): ${times.map((t) => t.toFixed(0)).join(', ')}`);
console.log(`median after warm-up: ${median.toFixed(1)} ms, ${((median / events) * 1000).toFixed(2)} ms per 1,000 events`);

import assert from 'node:assert/strict';
import fc from 'fast-check';
import { unpackCells, type PartsRow } from '../src/data/rollups';
import { matches, PartsAccumulator, type RollupEvent } from '../src/domain/rollup-rules';
import { storedDefinition } from './support/rollups';

function event(workerId: string, ts: string, overrides: Partial<RollupEvent> = {}): RollupEvent {
  return {
    workerId,
    instant: Date.parse(ts),
    eventType: 'ticket.resolved',
    category: 'TASK_UPDATE',
    statisticId: null,
    duration: 120,
    pillar: null,
    metadata: null,
    ...overrides,
  };
}

describe('PartsAccumulator', () => {
  it('sums each event into one cell per matching statistic, local day, worker and pillar, and gives the cells in key order', () => {
    const definitions = [
      storedDefinition('app', 'z-points', { aggregation: 'sumField', valueField: 'a.points' }),
      storedDefinition('app', 'a-done'),
      storedDefinition('app', 'time', { aggregation: 'durationMinutes', sourceEventTypes: ['build.finished'] }),
    ];
    const parts = new PartsAccumulator();
    // 23:30 UTC is the next day in Berlin.
    parts.add(definitions, event('wkr_b', '2026-11-02T23:30:00.000Z', { metadata: { a: { points: 3 } } }), 'Europe/Berlin');
    parts.add(definitions, event('wkr_a', '2026-11-03T08:00:00.000Z', { metadata: { a: { points: 2 } } }), 'Europe/Berlin');
    parts.add(definitions, event('wkr_b', '2026-11-03T09:00:00.000Z', { pillar: 'QUALITY' }), 'Europe/Berlin');
    parts.add(definitions, event('wkr_b', '2026-11-03T10:00:00.000Z', { metadata: { a: { points: 4 } } }), 'Europe/Berlin');
    const cells = unpackCells(parts.take()).map((c) => [c.statisticId, c.day, c.workerId, c.pillar, c.count, c.sum]);
    assert.deepEqual(cells, [
      ['app.a-done', '2026-11-03', 'wkr_a', 'DELIVERY', 1, 0],
      ['app.a-done', '2026-11-03', 'wkr_b', 'DELIVERY', 2, 0],
      ['app.a-done', '2026-11-03', 'wkr_b', 'QUALITY', 1, 0],
      ['app.z-points', '2026-11-03', 'wkr_a', 'DELIVERY', 1, 2],
      ['app.z-points', '2026-11-03', 'wkr_b', 'DELIVERY', 2, 7],
      ['app.z-points', '2026-11-03', 'wkr_b', 'QUALITY', 1, 0],
    ]);
  });

  it('gives every cell once, in code-unit order of statistic, day, worker and pillar, whatever order the events came in', () => {
    // Names that sort differently by code unit than by locale or length: case, digits, a longer prefix, non-ASCII.
    const names = ['a', 'B', 'a1', 'a10', 'a2', 'ab', 'é', 'Z'];
    const definitions = names.map((name) => storedDefinition('app', name));
    const anEvent = fc.record({
      worker: fc.constantFrom(...names),
      // Days are summed as numbers and given by date: expanded years sort before 0000-9999 by code unit.
      day: fc.oneof(
        fc.integer({ min: 1, max: 28 }).map((d) => `2026-11-${String(d).padStart(2, '0')}`),
        fc.constantFrom('-000001-12-31', '0000-01-01', '9999-12-31', '+010000-01-01'),
      ),
      statistic: fc.constantFrom(...names),
      pillar: fc.constantFrom(null, 'DELIVERY', 'QUALITY', 'COLLABORATION'),
    });
    const key = (c: PartsRow) => [c.statisticId, c.day, c.workerId, c.pillar];
    const inCodeUnitOrder = (a: PartsRow, b: PartsRow) => {
      const [x, y] = [key(a), key(b)];
      const i = x.findIndex((part, n) => part !== y[n]);
      return i < 0 ? 0 : (x[i] as string) < (y[i] as string) ? -1 : 1;
    };
    fc.assert(
      fc.property(fc.array(anEvent, { maxLength: 200 }), (events) => {
        const parts = new PartsAccumulator();
        for (const e of events) {
          const ts = `${e.day}T12:00:00.000Z`;
          parts.add(definitions, event(`wkr_${e.worker}`, ts, { statisticId: `app.${e.statistic}`, pillar: e.pillar }), 'UTC');
        }
        const taken = unpackCells(parts.take());
        assert.deepEqual(taken.map(key), [...taken].sort(inCodeUnitOrder).map(key), 'in key order');
        assert.equal(new Set(taken.map((c) => key(c).join('\u0000'))).size, taken.length, 'each cell once');
        assert.equal(
          taken.reduce((n, c) => n + c.count, 0),
          events.length,
          'every event counted',
        );
      }),
      { numRuns: 300 },
    );
  });

  it('keeps each cell its own parts past the room it starts with (thousands of cells), every aggregation', () => {
    const definitions = [
      storedDefinition('app', 'count'),
      storedDefinition('app', 'points', { aggregation: 'sumField', valueField: 'points' }),
      storedDefinition('app', 'first', { aggregation: 'ratio', valueField: 'first' }),
      storedDefinition('app', 'minutes', { aggregation: 'durationMinutes' }),
    ];
    const parts = new PartsAccumulator();
    const expected = new Map<string, number[]>();
    for (let i = 0; i < 6000; i++) {
      const workerId = `wkr_${i % 700}`;
      const day = `2026-11-0${1 + (i % 5)}`;
      const pillar = i % 3 === 0 ? 'QUALITY' : null;
      const metadata = { points: i % 7, first: i % 2 === 0 };
      parts.add(definitions, event(workerId, `${day}T12:00:00.000Z`, { pillar, duration: i % 11, metadata }), 'UTC');
      for (const d of definitions) {
        const key = [d.id, day, workerId, pillar ?? d.pillar].join(' ');
        const sums = expected.get(key) ?? [0, 0, 0, 0];
        sums[0] = (sums[0] ?? 0) + 1;
        if (d.aggregation === 'sumField') sums[1] = (sums[1] ?? 0) + metadata.points;
        if (d.aggregation === 'durationMinutes') sums[1] = (sums[1] ?? 0) + (i % 11);
        if (d.aggregation === 'ratio') [sums[2], sums[3]] = [(sums[2] ?? 0) + (metadata.first ? 1 : 0), (sums[3] ?? 0) + 1];
        expected.set(key, sums);
      }
    }
    const cells = unpackCells(parts.take());
    assert.ok(cells.length > 4000, `${cells.length} cells`);
    assert.deepEqual(
      new Map(cells.map((c) => [[c.statisticId, c.day, c.workerId, c.pillar].join(' '), [c.count, c.sum, c.numerator, c.denominator]])),
      expected,
    );
  });

  it('counts each event for the definitions of its own manifest it matches, events of every kind mixed, two manifests in turn', () => {
    const manifests = [
      [
        storedDefinition('one', 'resolved'),
        storedDefinition('one', 'builds', { sourceEventTypes: ['build.finished'], sourceEventCategories: ['TASK_UPDATE', 'MEETING'] }),
        storedDefinition('one', 'owned', { ownedBy: 'extractor' }),
      ],
      [
        storedDefinition('two', 'resolved', { sourceEventCategories: ['MEETING'] }),
        storedDefinition('two', 'any', { sourceEventTypes: ['ticket.resolved', 'build.finished'] }),
      ],
    ];
    const ids = manifests.flat().map((d) => d.id);
    const anEvent = fc.record({
      manifest: fc.constantFrom(0, 1),
      eventType: fc.constantFrom('ticket.resolved', 'build.finished', 'other.type'),
      category: fc.constantFrom(null, 'TASK_UPDATE', 'MEETING'),
      statisticId: fc.constantFrom(null, ...ids, 'elsewhere.unknown'),
    });
    fc.assert(
      fc.property(fc.array(anEvent, { maxLength: 100 }), (events) => {
        const parts = new PartsAccumulator();
        const expected = new Map<string, number>();
        events.forEach((e, i) => {
          const definitions = manifests[e.manifest] ?? [];
          const sent = event(`wkr_${i}`, '2026-11-03T12:00:00.000Z', {
            eventType: e.eventType,
            category: e.category,
            statisticId: e.statisticId,
          });
          parts.add(definitions, sent, 'UTC');
          for (const d of definitions) if (matches(d, sent)) expected.set(d.id, (expected.get(d.id) ?? 0) + 1);
        });
        const counted = new Map<string, number>();
        for (const cell of unpackCells(parts.take())) counted.set(cell.statisticId, (counted.get(cell.statisticId) ?? 0) + cell.count);
        assert.deepEqual(counted, expected);
      }),
      { numRuns: 300 },
    );
  });
});

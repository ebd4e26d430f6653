import assert from 'node:assert/strict';
import { PartsAccumulator, type RollupEvent } from '../src/domain/rollup-rules';
import { storedDefinition } from './support/rollups';

function event(workerId: string, ts: string, overrides: Partial<RollupEvent> = {}): RollupEvent {
  return {
    workerId,
    ts,
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
    const cells = parts.take().map((c) => [c.statisticId, c.day, c.workerId, c.pillar, c.count, c.sum]);
    assert.deepEqual(cells, [
      ['app.a-done', '2026-11-03', 'wkr_a', 'DELIVERY', 1, 0],
      ['app.a-done', '2026-11-03', 'wkr_b', 'DELIVERY', 2, 0],
      ['app.a-done', '2026-11-03', 'wkr_b', 'QUALITY', 1, 0],
      ['app.z-points', '2026-11-03', 'wkr_a', 'DELIVERY', 1, 2],
      ['app.z-points', '2026-11-03', 'wkr_b', 'DELIVERY', 2, 7],
      ['app.z-points', '2026-11-03', 'wkr_b', 'QUALITY', 1, 0],
    ]);
  });
});

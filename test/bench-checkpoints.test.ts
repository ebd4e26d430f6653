import assert from 'node:assert/strict';
import { checkpointsOf, duringSyncs, slowAndCheckpoints } from '../scripts/bench/checkpoints';

// make bench tells the p99 target's slow answers that came while PostgreSQL synced a checkpoint from the others:
// the statistics it polls say only when a checkpoint ended (between two readings) and how long its sync took.

describe('bench checkpoints', () => {
  const readings = [
    { atMs: 10_000, ended: 40, syncMs: 5_000 },
    { atMs: 10_250, ended: 40, syncMs: 5_000 },
    { atMs: 10_500, ended: 41, syncMs: 5_800 }, // a sync of 800 ms ended after 10,250
    { atMs: 10_750, ended: 41, syncMs: 5_800 },
    { atMs: 11_000, ended: 42, syncMs: 5_900 },
  ];

  it('bounds each sync by the reading before its end less its length and the reading after', () => {
    assert.deepEqual(checkpointsOf(readings), {
      ended: 2,
      syncSeconds: 0.9,
      syncs: [
        { fromMs: 9_450, toMs: 10_500 },
        { fromMs: 10_650, toMs: 11_000 },
      ],
    });
    assert.deepEqual(checkpointsOf(readings.slice(0, 2)), { ended: 0, syncSeconds: 0, syncs: [] });
  });

  it('counts the slow answers in flight during a sync, and only those', () => {
    const { syncs } = checkpointsOf(readings);
    const slow = [
      { endMs: 9_400, latencyMs: 150 }, // ended before the first sync could have begun
      { endMs: 9_500, latencyMs: 120 }, // ended during it
      { endMs: 10_640, latencyMs: 150 }, // began before the first ended, ended before the second began
      { endMs: 10_645, latencyMs: 110 }, // began and ended between the two
      { endMs: 11_200, latencyMs: 250 }, // began before the second ended
      { endMs: 11_200, latencyMs: 150 }, // began after it
      { endMs: 10_700, latencyMs: 101 }, // within the second
    ];
    assert.equal(duringSyncs(slow, syncs), 4);
  });

  it('keeps only the count of slow answers where there were no checkpoints to watch (SQLite)', () => {
    const slow = [{ endMs: 9_500, latencyMs: 120 }];
    assert.deepEqual(slowAndCheckpoints(slow, undefined), { slowAnswers: { all: 1 } });
    assert.deepEqual(slowAndCheckpoints(slow, checkpointsOf(readings)), {
      slowAnswers: { all: 1, duringCheckpointSyncs: 1 },
      checkpoints: { ended: 2, syncSeconds: 0.9 },
    });
  });
});

import assert from 'node:assert/strict';
import { LoadRecord } from '../scripts/bench/load-record';

// make bench judges its latency targets on the measured run alone: the warm-up's answers, among them the
// first of each connection (timed from when autocannon built it), count only as what the service stored.

describe('bench load record', () => {
  it('counts answers before the switch as the warm-up and times only those after it', () => {
    const record = new LoadRecord();
    record.response(202, 1_900); // a first request, charged with the building of the connections after it
    record.response(202, 40);
    record.response(503, 30);
    record.startMeasuring(1_000);
    for (let ms = 1; ms <= 100; ms++) record.response(202, ms);
    record.response(400, 7);

    const result = record.result(21_000, { errors: 2, timeouts: 1 });

    assert.deepEqual(result.warmupStatusCounts, { 202: 2, 503: 1 });
    assert.deepEqual(result.statusCounts, { 202: 100, 400: 1 });
    assert.equal(result.requests, 101);
    assert.equal(result.seconds, 20);
    assert.deepEqual(result.latencyMs, { p50: 50, p90: 90, p99: 99, max: 100, mean: 50.1 });
    assert.deepEqual([result.errors, result.timeouts], [2, 1]);
  });

  it("keeps the measured answers over 100 ms with when they arrived, not the warm-up's", () => {
    const record = new LoadRecord();
    record.response(202, 1_900, 500);
    record.startMeasuring(1_000);
    record.response(202, 100, 2_000);
    record.response(202, 101, 2_100);
    record.response(503, 340, 2_200);
    assert.deepEqual(record.result(21_000, { errors: 0, timeouts: 0 }).slow, [
      { endMs: 2_100, latencyMs: 101 },
      { endMs: 2_200, latencyMs: 340 },
    ]);
  });

  it('measures from the start when there is no warm-up', () => {
    const record = new LoadRecord();
    record.startMeasuring(0);
    record.response(202, 1_900);
    const result = record.result(5_000, { errors: 0, timeouts: 0 });
    assert.deepEqual(result.warmupStatusCounts, {});
    assert.equal(result.latencyMs.max, 1_900);
    assert.equal(result.seconds, 5);
  });
});

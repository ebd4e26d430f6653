import assert from 'node:assert/strict';
import { DayListCache, type ListScope, type WorkerDay } from '../src/data/day-list-cache';

const scope: ListScope = { orgId: 'org_1', generation: 1, statisticId: 'a.b', parts: ['count'] };
/** A day's list of `workers` workers: a worker id and one value each, `workers * 2` in size. */
function list(workers: number): WorkerDay {
  return { workers: Array.from({ length: workers }, (_, i) => `w${i}`), values: new Float64Array(workers) };
}
const tagsWithin = (cache: DayListCache, s: ListScope, from: string, to: string) => [...cache.within(s, from, to).keys()].sort();

describe('The kept day lists (DayListCache)', () => {
  it("answers the scope's lists within the range, by tag; another scope's or parts' are not its", () => {
    const cache = new DayListCache();
    cache.keep(scope, '2026-11-01', 't1', list(2));
    cache.keep(scope, '2026-11-02', 't2', list(2));
    cache.keep(scope, '2026-11-03', 't3', list(2));
    cache.keep({ ...scope, statisticId: 'a.c' }, '2026-11-02', 'u2', list(2));
    assert.deepEqual(tagsWithin(cache, scope, '2026-11-02', '2026-11-03'), ['t2', 't3']);
    assert.deepEqual(tagsWithin(cache, { ...scope, parts: ['count', 'sum'] }, '2026-11-01', '2026-11-03'), []);
    assert.deepEqual(tagsWithin(cache, { ...scope, generation: 2 }, '2026-11-01', '2026-11-03'), []);
    assert.deepEqual(tagsWithin(cache, { ...scope, statisticId: 'a.c' }, '2026-11-01', '2026-11-03'), ['u2']);
  });

  it("keeps a day's newest list only", () => {
    const cache = new DayListCache();
    cache.keep(scope, '2026-11-01', 't1', list(2));
    cache.keep(scope, '2026-11-01', 't1b', list(3));
    assert.deepEqual(tagsWithin(cache, scope, '2026-11-01', '2026-11-01'), ['t1b']);
    assert.equal(cache.lists, 1);
  });

  it('holds at most its size, the lists least recently read going first; a list larger than all of it is not kept', () => {
    const cache = new DayListCache(12);
    cache.keep(scope, '2026-11-01', 't1', list(2));
    cache.keep(scope, '2026-11-02', 't2', list(2));
    cache.keep(scope, '2026-11-03', 't3', list(2));
    assert.equal(cache.lists, 3);
    // Read: t1 goes last now.
    cache.within(scope, '2026-11-01', '2026-11-01');
    cache.keep(scope, '2026-11-04', 't4', list(3));
    assert.deepEqual(tagsWithin(cache, scope, '2026-11-01', '2026-11-30'), ['t1', 't4']);
    cache.keep(scope, '2026-11-05', 't5', list(7));
    assert.deepEqual(tagsWithin(cache, scope, '2026-11-01', '2026-11-30'), ['t1', 't4']);
  });
});

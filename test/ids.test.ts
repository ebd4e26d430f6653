import assert from 'node:assert/strict';
import { idsDrawnWith, newId, newIds } from '../src/data/ids';

describe('Ids', () => {
  it('never reuse randomness: draws of every size, across the pool of randomness running out and one larger than it', () => {
    const random = new Set<string>();
    let drawn = 0;
    for (const count of [1, 100, 511, 513, 1, 2000, 7, ...Array<number>(20).fill(100)]) {
      const ids = [...newIds('evt', count), newId('req')];
      assert.equal(ids.length, count + 1);
      for (const id of ids) {
        assert.match(id, /^(evt|req)_[0-9a-z]{9}[A-Za-z0-9_-]{12}$/);
        random.add(id.slice(-12));
      }
      drawn += ids.length;
    }
    assert.equal(random.size, drawn);
  });

  it("a batch's ids lie in the range idsDrawnWith gives for any of them; ids of a later millisecond sort after it", async () => {
    const ids = newIds('evt', 300);
    const { from, to, ms } = idsDrawnWith(ids[150] ?? '');
    assert.ok(ids.every((id) => id >= from && id < to));
    assert.ok(Math.abs(ms - Date.now()) < 60_000);
    await new Promise((resolve) => setTimeout(resolve, 2));
    const [later = ''] = newIds('evt', 1);
    assert.ok(later > to, `${later} after ${to}`);
  });
});

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { nextCheckpointInMs, openSqlite } from '../src/data/sqlite';

// The checkpoints need no database server: they run on SQLite whichever database the suite is on.
describe("SQLite's background checkpoints", () => {
  it('come right after each other while other connections commit, and rarely a while after they stopped', () => {
    const cadence = { busyMs: 1, busyForMs: 1000, idleMs: 25 };
    assert.equal(nextCheckpointInMs(0, cadence), 1);
    assert.equal(nextCheckpointInMs(999, cadence), 1);
    assert.equal(nextCheckpointInMs(1000, cadence), 25);
    assert.equal(nextCheckpointInMs(Infinity, cadence), 25);
  });

  /**
   * Commits 40 transactions of rows, 2 ms apart, on a new file, once the thread (if any) had time to start and
   * settle; resolves with the database file's size after each.
   */
  async function sizesWhileCommitting(checkpoints: boolean): Promise<number[]> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ingest-checkpoints-'));
    const file = path.join(dir, 'test.db');
    const { connection, stopCheckpoints } = openSqlite(file, { checkpoints });
    try {
      connection.exec('create table t (id integer primary key, body text not null)');
      const insert = connection.prepare('insert into t (body) values (?)');
      const commit = connection.transaction(() => {
        for (let i = 0; i < 50; i++) insert.run('x'.repeat(400));
      });
      commit();
      await sleep(300);
      const sizes: number[] = [];
      for (let round = 0; round < 40; round++) {
        commit();
        await sleep(2);
        sizes.push(statSync(file).size);
      }
      return sizes;
    } finally {
      await stopCheckpoints();
      connection.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('copy each commit into the database file soon after it, while the commits go on', async () => {
    // Without the thread the pages stay in the WAL (the writer's own threshold is 50,000 pages).
    const without = await sizesWhileCommitting(false);
    assert.equal(new Set(without).size, 1, `the file grew without checkpoints: ${without.join(', ')}`);
    // Every 25 ms, the 40 commits' 100 ms or so would show the file at 4 or 5 sizes; checkpointed one after the
    // other, at most of them.
    const sizes = await sizesWhileCommitting(true);
    assert.ok(new Set(sizes).size > 12, `the file grew only in steps: ${sizes.join(', ')}`);
  });
});

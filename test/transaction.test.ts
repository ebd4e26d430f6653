import assert from 'node:assert/strict';
import type { Executor } from '../src/data/schema';
import { GroupCommitter } from '../src/data/transaction';
import { insertWorker } from '../src/data/workers';
import { sharedDatabase } from './support/database';
import { createTenant } from './support/fixtures';

describe('Group commit', () => {
  async function committerWithTenant() {
    const { db } = await sharedDatabase();
    const tenant = await createTenant(db);
    const committer = new GroupCommitter(db.kysely);
    const addWorker = async (trx: Executor, name: string) => {
      await insertWorker(trx, { orgId: tenant.orgId, displayName: name, connectionId: null });
      return name;
    };
    const names = async () =>
      (await db.kysely.selectFrom('workers').select('display_name').where('org_id', '=', tenant.orgId).execute()).map(
        (w) => w.display_name,
      );
    return { committer, addWorker, names };
  }

  it('commits the units that queued together in one transaction, rolling back a failing unit alone', async () => {
    const { committer, addWorker, names } = await committerWithTenant();
    const settled: string[] = [];
    const units = [
      committer.run((trx) => addWorker(trx, 'first')),
      committer.run((trx) => addWorker(trx, 'second')),
      committer.run(async (trx) => {
        await addWorker(trx, 'doomed');
        throw new Error('this unit fails after writing');
      }),
      committer.run((trx) => addWorker(trx, 'third')),
    ].map((p, i) =>
      p.then(
        (v) => (settled.push(`ok ${i}`), v),
        (e: Error) => (settled.push(`failed ${i}`), e.message),
      ),
    );

    assert.deepEqual(await Promise.all(units), ['first', 'second', 'this unit fails after writing', 'third']);
    assert.deepEqual((await names()).sort(), ['first', 'second', 'third']);
    assert.equal(settled.length, 4);
  });

  it('runs the units that arrive in the same turn in one transaction', async () => {
    const { committer, addWorker, names } = await committerWithTenant();
    const transactions = new Set<Executor>();
    const unit = (name: string) =>
      committer.run(async (trx) => {
        transactions.add(trx);
        return addWorker(trx, name);
      });
    assert.deepEqual(await Promise.all([unit('a'), unit('b'), unit('c')]), ['a', 'b', 'c']);
    assert.equal(transactions.size, 1);
    assert.deepEqual((await names()).sort(), ['a', 'b', 'c']);
  });

  it('runs each unit of a failed group again alone: the others commit once, the failing one fails alone', async () => {
    const { committer, addWorker, names } = await committerWithTenant();
    const runs = { kept: 0, doomed: 0 };
    const kept = committer.run(async (trx) => {
      runs.kept++;
      return addWorker(trx, 'kept');
    });
    const doomed = committer.run(async (trx) => {
      runs.doomed++;
      await addWorker(trx, 'doomed');
      throw new Error('doomed');
    });
    assert.equal(await kept, 'kept');
    await assert.rejects(doomed, /doomed/);
    assert.deepEqual(await names(), ['kept']);
    assert.deepEqual(runs, { kept: 2, doomed: 2 }, 'once in the group, once alone');
  });

  it('rolls back a lone failing unit entirely, then goes on with the next group', async () => {
    const { committer, addWorker, names } = await committerWithTenant();
    // A lone unit that throws takes the whole transaction down with it.
    const lone = committer.run(async (trx) => {
      await addWorker(trx, 'lone');
      throw new Error('lone failure');
    });
    await assert.rejects(lone, /lone failure/);
    await committer.run((trx) => addWorker(trx, 'after'));
    assert.deepEqual(await names(), ['after']);
  });
});

import assert from 'node:assert/strict';
import { GroupCommitter } from '../src/data/transaction';
import { newId, nowIso } from '../src/data/ids';
import { sharedDatabase } from './support/database';
import { createTenant } from './support/fixtures';

describe('Group commit', () => {
  it('commits the units that queued together in one transaction, rolling back a failing unit alone', async () => {
    const { db } = await sharedDatabase();
    const tenant = await createTenant(db);
    const committer = new GroupCommitter(db.kysely);
    const insertWorker = (name: string) => async (trx: Parameters<Parameters<typeof committer.run>[0]>[0]) => {
      await trx.insertInto('workers').values({ id: newId('wkr'), org_id: tenant.orgId, display_name: name, email: null, email_lower: null, connection_id: null, created_at: nowIso() }).execute();
      return name;
    };
    const settled: string[] = [];
    const units = [
      committer.run(insertWorker('first')),
      committer.run(insertWorker('second')),
      committer.run(async (trx) => {
        await insertWorker('doomed')(trx);
        throw new Error('this unit fails after writing');
      }),
      committer.run(insertWorker('third')),
    ].map((p, i) => p.then((v) => (settled.push(`ok ${i}`), v), (e: Error) => (settled.push(`failed ${i}`), e.message)));

    assert.deepEqual(await Promise.all(units), ['first', 'second', 'this unit fails after writing', 'third']);
    const names = (await db.kysely.selectFrom('workers').select('display_name').where('org_id', '=', tenant.orgId).execute()).map((w) => w.display_name);
    assert.deepEqual(names.sort(), ['first', 'second', 'third']);
    assert.equal(settled.length, 4);
  });

  it('rolls back a lone failing unit entirely, then goes on with the next group', async () => {
    const { db } = await sharedDatabase();
    const tenant = await createTenant(db);
    const committer = new GroupCommitter(db.kysely);
    const id = newId('wkr');
    const write = (name: string) =>
      committer.run(async (trx) => {
        await trx.insertInto('workers').values({ id: newId('wkr'), org_id: tenant.orgId, display_name: name, email: null, email_lower: null, connection_id: null, created_at: nowIso() }).execute();
      });
    // A lone unit that throws takes the whole transaction down with it.
    const lone = committer.run(async (trx) => {
      await trx.insertInto('workers').values({ id, org_id: tenant.orgId, display_name: 'lone', email: null, email_lower: null, connection_id: null, created_at: nowIso() }).execute();
      throw new Error('lone failure');
    });
    await assert.rejects(lone, /lone failure/);
    await write('after');
    const names = (await db.kysely.selectFrom('workers').select('display_name').where('org_id', '=', tenant.orgId).execute()).map((w) => w.display_name);
    assert.deepEqual(names, ['after']);
  });
});

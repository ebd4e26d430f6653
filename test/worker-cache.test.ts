import assert from 'node:assert/strict';
import SqliteDatabase from 'better-sqlite3';
import type { Db } from '../src/data/db';
import { newId } from '../src/data/ids';
import { sqliteKysely } from '../src/data/sqlite';
import { GroupCommitter } from '../src/data/transaction';
import { WorkerCache } from '../src/data/worker-cache';
import { insertWorkers, linkExternalIds, workersByExternalId, workersById } from '../src/data/workers';
import { client } from './support/client';
import { testDialect } from './support/database';
import { event } from './support/events';
import { setup } from './support/fixtures';

const EVENTS = '/api/v1/ingest/events';

/** Points the app's link of `externalId` at another worker, committed on the shared database's own connection. */
async function relink(db: Db, appId: string, externalId: string, workerId: string): Promise<void> {
  await db.kysely
    .updateTable('worker_external_ids')
    .set({ worker_id: workerId })
    .where('app_id', '=', appId)
    .where('external_id', '=', externalId)
    .execute();
}

// SQLite's writer thread keeps the workers it read; PostgreSQL has no writer thread.
(testDialect === 'sqlite' ? describe : describe.skip)("The SQLite writer's worker cache", () => {
  /** A connection of its own to the shared file, as the writer thread has, with every statement it runs counted. */
  async function writerLike() {
    const { db, config, tenant } = await setup();
    if (config.database.kind !== 'sqlite') throw new Error('a SQLite test');
    const statements: string[] = [];
    const connection = new SqliteDatabase(config.database.path, { verbose: (text) => statements.push(String(text)) });
    connection.pragma('busy_timeout = 5000');
    const kysely = sqliteKysely(connection, {});
    const committer = new GroupCommitter(kysely, connection, new WorkerCache(connection));
    const lookUps = () => statements.filter((text) => text.includes('worker_external_ids')).length;
    const worker = async (name: string, externalId: string) => {
      const ref = { id: newId('wkr'), displayName: name };
      await db.kysely.transaction().execute(async (trx) => {
        await insertWorkers(trx, [{ ...ref, orgId: tenant.orgId, connectionId: null }]);
        await linkExternalIds(trx, tenant.appId, [{ externalId, workerId: ref.id }]);
      });
      return ref;
    };
    return { db, tenant, committer, kysely, lookUps, worker };
  }

  it('answers the workers it read again without reading them, by externalId and by workerId', async () => {
    const { tenant, committer, kysely, lookUps, worker } = await writerLike();
    try {
      const ada = await worker('Ada', 'ext-ada');
      const byExternalId = () => committer.run((trx) => workersByExternalId(trx, tenant.appId, ['ext-ada', 'ext-nobody']));
      assert.deepEqual(await byExternalId(), new Map([['ext-ada', ada]]));
      assert.deepEqual(await byExternalId(), new Map([['ext-ada', ada]]));
      // The second look-up read only the externalId that has no worker.
      assert.equal(lookUps(), 2);
      const reads = lookUps();
      assert.deepEqual(await committer.run((trx) => workersByExternalId(trx, tenant.appId, ['ext-ada'])), new Map([['ext-ada', ada]]));
      assert.equal(lookUps(), reads);

      const byId = () => committer.run((trx) => workersById(trx, tenant.orgId, [ada.id]));
      assert.deepEqual(await byId(), new Map([[ada.id, ada]]));
      assert.deepEqual(await byId(), new Map([[ada.id, ada]]));
    } finally {
      await kysely.destroy();
    }
  });

  it('reads them again once another connection has committed', async () => {
    const { db, tenant, committer, kysely, worker } = await writerLike();
    try {
      const ada = await worker('Ada', 'ext-moved');
      const look = () => committer.run((trx) => workersByExternalId(trx, tenant.appId, ['ext-moved']));
      assert.deepEqual(await look(), new Map([['ext-moved', ada]]));
      // The link now names another worker, changed on another connection (the HTTP thread's, say).
      const grace = await worker('Grace', 'ext-other');
      await relink(db, tenant.appId, 'ext-moved', grace.id);
      assert.deepEqual(await look(), new Map([['ext-moved', grace]]));
    } finally {
      await kysely.destroy();
    }
  });

  it('forgets what a transaction that rolled back taught it', async () => {
    const { tenant, committer, kysely } = await writerLike();
    try {
      const look = () => committer.run((trx) => workersByExternalId(trx, tenant.appId, ['ext-undone']));
      const undone = committer.run(async (trx) => {
        const ref = { id: newId('wkr'), displayName: 'Undone' };
        await insertWorkers(trx, [{ ...ref, orgId: tenant.orgId, connectionId: null }]);
        await linkExternalIds(trx, tenant.appId, [{ externalId: 'ext-undone', workerId: ref.id }]);
        assert.deepEqual(await workersByExternalId(trx, tenant.appId, ['ext-undone']), new Map([['ext-undone', ref]]));
        throw new Error('rolled back after reading its own worker');
      });
      await assert.rejects(undone, /rolled back/);
      assert.deepEqual(await look(), new Map());
    } finally {
      await kysely.destroy();
    }
  });

  it('starts over past 20,000 workers, so that its memory stays bounded', async () => {
    const cache = new WorkerCache(new SqliteDatabase(':memory:'));
    const loaded: string[] = [];
    const load = async (keys: string[]) => {
      loaded.push(...keys);
      return new Map(keys.map((key) => [key, { id: key, displayName: key }]));
    };
    await cache.lookup(
      'app',
      Array.from({ length: 20_000 }, (_, i) => `w${i}`),
      load,
    );
    await cache.lookup('app', ['w0'], load);
    assert.equal(loaded.length, 20_000);
    await cache.lookup('app', ['one more'], load);
    await cache.lookup('app', ['w0', 'one more'], load);
    assert.deepEqual(loaded.slice(20_000), ['one more', 'w0']);
  });

  it('stores the events of an externalId relinked meanwhile for the worker it names now', async () => {
    const { db, app, tenant } = await setup();
    const send = async (marker: string) => {
      const res = await client(app).post(EVENTS, {
        key: tenant.key,
        body: { events: [event({ actor: { externalId: 'ext-relinked' }, metadata: { marker } })] },
      });
      assert.equal(res.status, 202);
    };
    const workerOf = async (marker: string) =>
      (await db.kysely.selectFrom('events').select(['worker_id', 'metadata']).where('org_id', '=', tenant.orgId).execute()).find((e) =>
        e.metadata?.includes(`"${marker}"`),
      )?.worker_id;
    await send('created');
    await send('read');
    const first = await workerOf('read');
    assert.equal(first, await workerOf('created'));
    const other = { id: newId('wkr'), displayName: 'Other' };
    await insertWorkers(db.kysely, [{ ...other, orgId: tenant.orgId, connectionId: null }]);
    await relink(db, tenant.appId, 'ext-relinked', other.id);
    await send('after');
    assert.equal(await workerOf('after'), other.id);
  });
});

import assert from 'node:assert/strict';
import type { Transaction } from 'kysely';
import { createApp } from '../src/app';
import type { Database } from '../src/data/schema';
import { ActorResolver } from '../src/domain/actors';
import { addWorker } from '../src/domain/administration';
import { client } from './support/client';
import { testDialect } from './support/database';
import { event } from './support/events';
import { failingUpdates } from './support/failing-write';
import { setup, silentLogger } from './support/fixtures';

const EVENTS = '/api/v1/ingest/events';
const SNAPSHOTS = '/api/v1/ingest/snapshots';
type Setup = Awaited<ReturnType<typeof setup>>;

async function workersOf(db: Setup['db'], orgId: string) {
  return db.kysely.selectFrom('workers').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
}

async function workerOfEvents(db: Setup['db'], ids: string[]) {
  const rows = await db.kysely.selectFrom('events').select(['id', 'worker_id']).where('id', 'in', ids).execute();
  return ids.map((id) => rows.find((r) => r.id === id)?.worker_id);
}

/** What an ActorResolver of the tenant's app works in: its organization, app and connection. */
async function actorScopeOf(db: Setup['db'], tenant: Setup['tenant']) {
  const { id: connectionId } = await db.kysely
    .selectFrom('connections')
    .select('id')
    .where('app_id', '=', tenant.appId)
    .executeTakeFirstOrThrow();
  return { orgId: tenant.orgId, appId: tenant.appId, connectionId };
}

/** `trx` counting its insert statements by table and its delete statements, as they are run. */
function countingInserts(trx: Transaction<Database>) {
  const inserts: Record<string, number> = {};
  let deletes = 0;
  const counted = trx.withPlugin({
    transformQuery: ({ node }) => {
      if (node.kind === 'InsertQueryNode' && node.into) {
        const table = node.into.table.identifier.name;
        inserts[table] = (inserts[table] ?? 0) + 1;
      }
      if (node.kind === 'DeleteQueryNode') deletes++;
      return node;
    },
    transformResult: async ({ result }) => result,
  });
  return {
    counted,
    inserts,
    get deletes() {
      return deletes;
    },
  };
}

describe('Actor resolution', () => {
  it('creates a worker for a new actor, named after displayName, linked to the custom:<slug> connection', async () => {
    const { app, db, tenant } = await setup();
    const res = await client(app).post(EVENTS, {
      key: tenant.key,
      body: { events: [event({ actor: { externalId: 'e-1', email: 'Ann@x.example', displayName: 'Ann' } })] },
    });
    assert.equal(res.status, 202);
    const [worker] = await workersOf(db, tenant.orgId);
    assert.ok(worker);
    assert.equal(worker.display_name, 'Ann');
    assert.equal(worker.email, 'Ann@x.example');
    const connection = await db.kysely
      .selectFrom('connections')
      .selectAll()
      .where('id', '=', worker.connection_id as string)
      .executeTakeFirstOrThrow();
    assert.equal(connection.integration_id, `custom:${tenant.slug}`);
    const link = await db.kysely
      .selectFrom('worker_external_ids')
      .selectAll()
      .where('app_id', '=', tenant.appId)
      .where('external_id', '=', 'e-1')
      .executeTakeFirstOrThrow();
    assert.equal(link.worker_id, worker.id);
  });

  it('names a created worker after email when there is no displayName, else after externalId', async () => {
    const { app, db, tenant } = await setup();
    const res = await client(app).post(EVENTS, {
      key: tenant.key,
      body: { events: [event({ actor: { email: 'bo@x.example' } }), event({ actor: { externalId: 'ext-7' } })] },
    });
    assert.equal(res.status, 202);
    assert.deepEqual((await workersOf(db, tenant.orgId)).map((w) => w.display_name).sort(), ['bo@x.example', 'ext-7']);
  });

  it('processes events in order: the worker created for event 0 is the worker of event 7 with the same externalId', async () => {
    const { app, db, tenant } = await setup();
    const events = Array.from({ length: 8 }, (_, i) => event({ actor: { externalId: i === 0 || i === 7 ? 'same' : `other-${i}` } }));
    const res = await client(app).post(EVENTS, { key: tenant.key, body: { events } });
    assert.equal(res.status, 202);
    const ids = res.body.results.accepted.map((a: { id: string }) => a.id);
    const workers = await workerOfEvents(db, ids);
    assert.equal(workers[0], workers[7]);
    assert.equal(new Set(workers).size, 7);
  });

  it('prefers externalId over email, and a match by email links the externalId for the next lookup', async () => {
    const { app, db, tenant } = await setup();
    const dir = await addWorker(db, { orgId: tenant.orgId, email: 'cy@x.example', name: 'Cy' });
    const api = client(app);
    const first = await api.post(EVENTS, {
      key: tenant.key,
      body: { events: [event({ actor: { externalId: 'cy-ext', email: 'CY@x.example' } })] },
    });
    const second = await api.post(EVENTS, {
      key: tenant.key,
      body: { events: [event({ actor: { externalId: 'cy-ext', email: 'someone-else@x.example' } })] },
    });
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    const workers = await workerOfEvents(db, [first.body.results.accepted[0].id, second.body.results.accepted[0].id]);
    assert.deepEqual(workers, [dir.id, dir.id]);
    assert.equal((await workersOf(db, tenant.orgId)).length, 1, 'no worker was created for the other email');
  });

  it('resolves workerId first without trying the other fields', async () => {
    const { app, db, tenant } = await setup();
    const dir = await addWorker(db, { orgId: tenant.orgId, email: 'di@x.example' });
    const res = await client(app).post(EVENTS, {
      key: tenant.key,
      body: { events: [event({ actor: { workerId: dir.id, externalId: 'ignored', email: 'nobody@x.example' } })] },
    });
    assert.equal(res.status, 202);
    assert.deepEqual(await workerOfEvents(db, [res.body.results.accepted[0].id]), [dir.id]);
    assert.equal((await workersOf(db, tenant.orgId)).length, 1);
    const links = await db.kysely.selectFrom('worker_external_ids').selectAll().where('app_id', '=', tenant.appId).execute();
    assert.equal(links.length, 0);
  });

  it("keeps organizations apart: another organization's workerId is worker_not_found, its externalIds and emails do not match", async () => {
    const mine = await setup();
    const theirs = await setup();
    const stranger = await addWorker(theirs.db, { orgId: theirs.tenant.orgId, email: 'shared@x.example' });
    const seeded = await client(theirs.app).post(EVENTS, {
      key: theirs.tenant.key,
      body: { events: [event({ actor: { externalId: 'shared-ext' } })] },
    });
    assert.equal(seeded.status, 202);

    const api = client(mine.app);
    const byId = await api.post(EVENTS, { key: mine.tenant.key, body: { events: [event({ actor: { workerId: stranger.id } })] } });
    assert.equal(byId.status, 404);
    assert.equal(byId.body.error.code, 'worker_not_found');

    const res = await api.post(EVENTS, {
      key: mine.tenant.key,
      body: { events: [event({ actor: { email: 'shared@x.example' } }), event({ actor: { externalId: 'shared-ext' } })] },
    });
    assert.equal(res.status, 202);
    const workers = await workerOfEvents(
      mine.db,
      res.body.results.accepted.map((a: { id: string }) => a.id),
    );
    const mineWorkers = (await workersOf(mine.db, mine.tenant.orgId)).map((w) => w.id);
    assert.equal(mineWorkers.length, 2);
    for (const w of workers) assert.ok(mineWorkers.includes(w as string));
  });

  it('refuses an actor string with a lone surrogate, which UTF-8 text cannot hold: stored as U+FFFD, it used to miss itself (500) when seen again', async () => {
    const { app, tenant } = await setup();
    for (const sighting of [1, 2]) {
      const res = await client(app).post(EVENTS, {
        key: tenant.key,
        body: { events: [event({ actor: { externalId: 'a\ud800', email: 'lone@x.example' } })] },
      });
      assert.equal(res.status, 400, `sighting ${sighting}`);
      assert.match(res.body.error.message, /\/events\/0\/actor\/externalId must match pattern/);
    }
    const name = await client(app).post(SNAPSHOTS, {
      key: tenant.key,
      body: { snapshotType: 'load.now', actor: { externalId: 'ok', displayName: '\udc00' }, metrics: { a: 1 } },
    });
    assert.equal(name.status, 400);
    const paired = await client(app).post(EVENTS, {
      key: tenant.key,
      body: { events: [event({ actor: { externalId: 'emoji-😀', displayName: '👩‍💻' } })] },
    });
    assert.equal(paired.status, 202, 'characters beyond U+FFFF, as surrogate pairs, are welcome');
  });

  it('creates exactly one worker for 20 concurrent first sightings of one actor', async () => {
    const { app, db, tenant } = await setup();
    const api = client(app);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post(EVENTS, {
          key: tenant.key,
          body: {
            events: [event({ actor: { externalId: 'racer', email: 'racer@x.example' } }), event({ actor: { externalId: `solo-${i}` } })],
          },
        }),
      ),
    );
    for (const res of responses) assert.equal(res.status, 202);
    const racers = (await workersOf(db, tenant.orgId)).filter((w) => w.email === 'racer@x.example');
    assert.equal(racers.length, 1);
    const ids = responses.map((r) => r.body.results.accepted[0].id);
    assert.deepEqual(new Set(await workerOfEvents(db, ids)), new Set([racers[0]?.id]));
    assert.equal((await workersOf(db, tenant.orgId)).length, 21);
  });

  it('creates the same new people named in opposite orders by concurrent transactions without deadlocking (not retried here)', async () => {
    const { db, tenant } = await setup();
    const scope = await actorScopeOf(db, tenant);
    const actors = Array.from({ length: 12 }, (_, i) => ({ externalId: `both-${i}`, email: `both-${i}@x.example` }));
    // Straight through kysely: db.transaction would retry the loser of a deadlock and hide it.
    const resolveIn = (order: typeof actors) =>
      db.kysely.transaction().execute(async (trx) => {
        const resolved = await new ActorResolver(trx, scope).resolveAll(order, (a) => a);
        return new Map(resolved.map(({ item, worker }) => [item.externalId, worker.id]));
      });
    const [forward, backward] = await Promise.all([resolveIn(actors), resolveIn([...actors].reverse())]);
    assert.deepEqual(forward, backward, 'both transactions resolve every person to the same worker');
    assert.equal((await workersOf(db, tenant.orgId)).length, actors.length);
  });

  it('creates a batch of new people in one statement for their workers and one for their links', async () => {
    const { db, tenant } = await setup();
    const scope = await actorScopeOf(db, tenant);
    const actors = Array.from({ length: 30 }, (_, i) => ({ externalId: `new-${i}`, email: `new-${i}@x.example` }));
    const resolved = await db.kysely.transaction().execute(async (trx) => {
      const { counted, inserts } = countingInserts(trx);
      const resolver = new ActorResolver(counted, scope);
      await resolver.prefetch(actors);
      // Named twice: one worker.
      const all = await resolver.resolveAll([...actors, actors[0]], (a) => a);
      return { all, inserts };
    });
    assert.deepEqual(resolved.inserts, { workers: 1, worker_external_ids: 1 });
    assert.equal(new Set(resolved.all.map(({ worker }) => worker.id)).size, actors.length);
    assert.equal(resolved.all[0]?.worker.id, resolved.all[actors.length]?.worker.id);
    assert.equal((await workersOf(db, tenant.orgId)).length, actors.length);
  });

  it("after losing the race for new people, takes the other request's workers and deletes its own, one statement each", async () => {
    const { db, tenant } = await setup();
    const scope = await actorScopeOf(db, tenant);
    // Five people by externalId alone (their workers cannot clash by email: the links do), five also by email
    // (the workers clash), and five only this request names.
    const actors = [
      ...Array.from({ length: 5 }, (_, i) => ({ externalId: `crowd-${i}` })),
      ...Array.from({ length: 5 }, (_, i) => ({ externalId: `mailed-${i}`, email: `mailed-${i}@x.example` })),
      ...Array.from({ length: 5 }, (_, i) => ({ externalId: `mine-${i}`, email: `mine-${i}@x.example` })),
    ];
    const resolvedBy = await db.kysely.transaction().execute(async (trx) => {
      const counter = countingInserts(trx);
      const late = new ActorResolver(counter.counted, scope);
      await late.prefetch(actors);
      // Another request creates the same people after this one looked them up (seen here as PostgreSQL shows
      // a committed transaction's rows to the next statement of ours; SQLite cannot run the two side by side).
      const first = await new ActorResolver(trx, scope).resolveAll(actors.slice(0, 10), (a) => a);
      const theirs = new Map(first.map(({ item, worker }) => [item.externalId, worker.id]));
      const ours = await late.resolveAll(actors, (a) => a);
      const byExternalId = new Map(ours.map(({ item, worker }) => [item.externalId, worker.id]));
      return { theirs, ours: byExternalId, inserts: counter.inserts, deletes: counter.deletes };
    });
    for (const [externalId, worker] of resolvedBy.theirs) {
      assert.equal(resolvedBy.ours.get(externalId), worker, `${externalId} resolves to the worker the other request created`);
    }
    assert.deepEqual(resolvedBy.inserts, { workers: 1, worker_external_ids: 1 });
    assert.equal(resolvedBy.deletes, 1, 'the five workers made for the people linked first, deleted in one statement');
    const workers = await workersOf(db, tenant.orgId);
    assert.equal(workers.length, actors.length);
    assert.deepEqual(new Set(workers.map((w) => w.id)), new Set(resolvedBy.ours.values()));
  });

  it("stores a full batch of 500 events, each naming a new person, with their workers (within both databases' parameter limits)", async () => {
    const { app, db, tenant } = await setup();
    const events = Array.from({ length: 500 }, (_, i) =>
      event({ actor: { externalId: `full-${i}`, email: `full-${i}@x.example`, displayName: `Full ${i}` } }),
    );
    const res = await client(app).post(EVENTS, { key: tenant.key, body: { events } });
    assert.equal(res.status, 202);
    assert.equal(res.body.results.accepted.length, 500);
    assert.equal((await workersOf(db, tenant.orgId)).length, 500);
  });

  it('creates one worker for concurrent first sightings by externalId only', async () => {
    const { app, db, tenant } = await setup();
    const api = client(app);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        api.post(EVENTS, { key: tenant.key, body: { events: [event({ actor: { externalId: 'quiet' } })] } }),
      ),
    );
    for (const res of responses) assert.equal(res.status, 202);
    assert.equal((await workersOf(db, tenant.orgId)).length, 1);
  });
});

describe('Atomicity', () => {
  it(`a failure after the workers and events were written in the request's transaction stores nothing and answers 500 internal_error (${testDialect})`, async () => {
    const { db, config, tenant } = await setup();
    // The last write of the transaction (the Idempotency-Key's response record) fails.
    const failing = await failingUpdates('idempotency_records');
    const app = createApp(config, failing, { logger: silentLogger });
    const res = await client(app).post(EVENTS, {
      key: tenant.key,
      headers: { 'Idempotency-Key': 'fails-late' },
      body: { events: [event({ actor: { externalId: 'a-1', email: 'a1@x.example' } }), event({ actor: { externalId: 'a-2' } })] },
    });
    await failing.close();
    assert.equal(res.status, 500);
    assert.equal(res.body.error.code, 'internal_error');
    assert.equal((await workersOf(db, tenant.orgId)).length, 0, 'the workers created before the failure were rolled back');
    const links = await db.kysely.selectFrom('worker_external_ids').selectAll().where('app_id', '=', tenant.appId).execute();
    assert.equal(links.length, 0);
    const events = await db.kysely.selectFrom('events').selectAll().where('org_id', '=', tenant.orgId).execute();
    assert.equal(events.length, 0);
  });
});

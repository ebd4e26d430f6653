import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { addWorker } from '../src/domain/administration';
import { judgeBatch, type JudgedBatch } from '../src/domain/event-ingest';
import { StatementGroups, type StatementResult } from '../src/domain/statement-groups';
import { eventsCounted, monthOf } from '../src/data/usage';
import { linkExternalIds } from '../src/data/workers';
import { testDialect } from './support/database';
import { event } from './support/events';
import { client } from './support/client';
import { createTenant, setup } from './support/fixtures';

const EVENTS = '/api/v1/ingest/events';

type Setup = Awaited<ReturnType<typeof setup>>;

let requests = 0;

/** A batch of the tenant's `events` (or those of the app of `key`), judged as the ingest handler judges it, with a request id of its own. */
async function judged({ db, services, tenant }: Setup, events: unknown[], key = tenant.key): Promise<JudgedBatch> {
  const principal = await services.authenticator.authenticate(`Bearer ${key}`);
  requests += 1;
  const ctx = { principal, requestId: `req_group_${requests}`, receivedAt: new Date() };
  return judgeBatch(db, services.validate.event, events, ctx, services.keptRules, true);
}

/** The stored events of the batch `requestId`: id, batch and the transaction that wrote them. */
function storedOf({ db }: Setup, requestId: string) {
  return db.kysely
    .selectFrom('events')
    .select(['id', 'batch_id', 'worker_id', sql<string>`xmin::text`.as('xmin')])
    .where('request_id', '=', requestId)
    .orderBy('ts')
    .orderBy('id')
    .execute();
}

function granted(result: StatementResult): number {
  if (typeof result === 'string') throw new Error(`the statement answered ${result}`);
  return result.granted;
}

function workerIdsOf(result: StatementResult): string[] {
  if (typeof result === 'string') throw new Error(`the statement answered ${result}`);
  return result.workerIds;
}

describe('PostgreSQL: batches of one app stored together (StatementGroups)', function () {
  before(function () {
    if (testDialect !== 'postgres') this.skip();
  });

  async function withWorkers(quota?: number) {
    const s = await setup({}, { maxEventsPerMonth: quota ?? null });
    const workers = await Promise.all(
      ['ana', 'ben', 'cy'].map((name) => addWorker(s.db, { orgId: s.tenant.orgId, email: `${name}@acme.example`, name })),
    );
    return { s, ids: workers.map((w) => w.id) };
  }

  it('stores the batches that queued behind a statement in the next one, each as if alone: its request, its first event as its batch, its outbox row, its own outcome', async () => {
    const { s, ids } = await withWorkers();
    const [ana, ben, cy] = ids as [string, string, string];
    const at = (h: number) => `2026-11-20T${String(h).padStart(2, '0')}:00:00Z`;
    const batches = await Promise.all([
      judged(s, [event({ actor: { workerId: ana }, timestamp: at(1) })]),
      judged(s, [event({ actor: { workerId: ben }, timestamp: at(2) }), event({ actor: { email: 'ANA@acme.example' }, timestamp: at(3) })]),
      judged(s, [
        event({ actor: { workerId: 'wkr_000000000nothing' }, timestamp: at(4) }),
        event({ actor: { workerId: cy }, timestamp: at(5) }),
        event({ actor: { workerId: ana }, timestamp: at(6) }),
      ]),
      judged(s, [event({ actor: { workerId: cy }, timestamp: at(7) })]),
    ]);
    const groups = groupsOf(s);
    // The first runs alone at once; the three that wait for it go together.
    const results = await Promise.all(batches.map((b) => groups.store(b)));

    assert.deepEqual(results, [
      { unknownWorkerIds: [], granted: 1, workerIds: [ana] },
      { unknownWorkerIds: [], granted: 2, workerIds: [ben, ana] },
      { unknownWorkerIds: [0], granted: 2, workerIds: [cy, ana] },
      { unknownWorkerIds: [], granted: 1, workerIds: [cy] },
    ]);
    const stored = await Promise.all(batches.map((b) => storedOf(s, b.ctx.requestId)));
    batches.forEach((batch, i) => {
      const rows = stored[i] ?? [];
      const expected = batch.candidates.filter((c) => c.event.actor.workerId !== 'wkr_000000000nothing').map((c) => c.id);
      assert.deepEqual(
        rows.map((r) => r.id),
        expected,
      );
      assert.ok(rows.every((r) => r.batch_id === expected[0]));
    });
    const transactions = stored.map((rows) => new Set(rows.map((r) => r.xmin)));
    assert.ok(transactions.every((t) => t.size === 1));
    const [alone, ...together] = transactions.map((t) => [...t][0]);
    assert.equal(new Set(together).size, 1);
    assert.notEqual(alone, together[0]);

    const outbox = await s.db.kysely
      .selectFrom('rollup_outbox')
      .select(['id', 'first_ts', 'last_ts'])
      .where('org_id', '=', s.tenant.orgId)
      .orderBy('first_ts')
      .execute();
    assert.deepEqual(
      outbox.map((o) => [o.id, o.first_ts, o.last_ts]),
      batches.map((batch, i) => {
        const kept = batch.candidates.filter((c) => (stored[i] ?? []).some((r) => r.id === c.id));
        return [kept[0]?.id, kept[0]?.ts, kept.at(-1)?.ts];
      }),
    );
  });

  it('grants the quota batch after batch: the first that fit, in order, as if the batches came one by one', async () => {
    const { s, ids } = await withWorkers(6);
    const [ana] = ids as [string];
    // The first batch under a quota makes the month's usage rows (step by step); the statements find them.
    const opening = await client(s.app).post(EVENTS, { key: s.tenant.key, body: { events: [event({ actor: { workerId: ana } })] } });
    assert.equal(opening.status, 202);
    const three = () =>
      judged(
        s,
        [1, 2, 3].map(() => event({ actor: { workerId: ana } })),
      );
    const batches = await Promise.all([three(), three(), three(), three()]);
    const groups = groupsOf(s);
    const results = await Promise.all(batches.map((b) => groups.store(b)));
    assert.deepEqual(results.map(granted), [3, 2, 0, 0]);
    assert.equal(await eventsCounted(s.db.kysely, s.tenant.orgId, monthOf(new Date())), 6);
  });

  it('stores batch by batch a group that one batch declines (a worker to create) or makes fail, each with its own outcome', async () => {
    const { s, ids } = await withWorkers();
    const [ana] = ids as [string];
    const known = () => judged(s, [event({ actor: { workerId: ana } })]);
    const needsWorker = await judged(s, [event({ actor: { externalId: 'new-person' } })]);
    const failing = await known();
    // Past PostgreSQL's integer: the statement fails, as a batch the database refuses would make it.
    const [candidate] = failing.candidates;
    if (!candidate) throw new Error('the batch has no candidate');
    candidate.event = { ...candidate.event, duration: 2 ** 40 };

    const declinedGroup = [await known(), await known(), needsWorker, await known()];
    const declined = await storeAll(s, declinedGroup);
    assert.deepEqual(
      declined.map((r) => (typeof r === 'string' ? r : r.granted)),
      [1, 1, 'declined', 1],
    );

    const failingGroup = [await known(), await known(), failing, await known()];
    const groups = groupsOf(s);
    const settled = await Promise.allSettled(failingGroup.map((b) => groups.store(b)));
    assert.deepEqual(
      settled.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    );
    const rejected = settled[2];
    assert.equal(rejected?.status === 'rejected' && (rejected.reason as { code?: string }).code, '22003');
    for (const batch of [...declinedGroup, ...failingGroup]) {
      const expected = batch === needsWorker || batch === failing ? 0 : 1;
      assert.equal((await storedOf(s, batch.ctx.requestId)).length, expected);
    }
  });

  it("takes an externalId's worker from the links its earlier statements found, each app's its own", async () => {
    const { s, ids } = await withWorkers();
    const [ana, ben] = ids as [string, string];
    const other = await createTenant(s.db);
    const cy = (await addWorker(s.db, { orgId: other.orgId, email: 'cy@other.example', name: 'cy' })).id;
    await linkExternalIds(s.db.kysely, s.tenant.appId, [{ externalId: 'ext-1', workerId: ana }]);
    await linkExternalIds(s.db.kysely, other.appId, [{ externalId: 'ext-1', workerId: cy }]);
    const ext1 = (key?: string) => judged(s, [event({ actor: { externalId: 'ext-1' } })], key);
    const groups = groupsOf(s);
    assert.deepEqual(workerIdsOf(await groups.store(await ext1())), [ana]);

    // A committed link never changes: changed here behind the statements' back, it shows which of them read it.
    await s.db.kysely
      .updateTable('worker_external_ids')
      .set({ worker_id: ben })
      .where('app_id', '=', s.tenant.appId)
      .where('external_id', '=', 'ext-1')
      .execute();
    const again = await ext1();
    assert.deepEqual(workerIdsOf(await groups.store(again)), [ana]);
    assert.deepEqual(
      (await storedOf(s, again.ctx.requestId)).map((r) => r.worker_id),
      [ana],
    );
    assert.deepEqual(workerIdsOf(await groupsOf(s).store(await ext1())), [ben]);
    assert.deepEqual(workerIdsOf(await groups.store(await ext1(other.key))), [cy]);
  });

  it('takes no more than its limit of events into one statement: the rest wait for the next', async () => {
    const { s, ids } = await withWorkers();
    const [ana] = ids as [string];
    const two = () => judged(s, [event({ actor: { workerId: ana } }), event({ actor: { workerId: ana } })]);
    const batches = await Promise.all([two(), two(), two(), two(), two()]);
    const groups = groupsOf(s, 4);
    await Promise.all(batches.map((b) => groups.store(b)));
    const xmins = await Promise.all(batches.map(async (b) => (await storedOf(s, b.ctx.requestId))[0]?.xmin));
    // One alone, then two groups of two batches (four events each).
    assert.equal(xmins[1], xmins[2]);
    assert.equal(xmins[3], xmins[4]);
    assert.equal(new Set(xmins).size, 3);
  });

  it('runs one statement at a time while fewer events than its limit for another wait, and a second beside it once as many do', async () => {
    const { s, ids } = await withWorkers();
    const [ana] = ids as [string];
    const two = () => judged(s, [event({ actor: { workerId: ana } }), event({ actor: { workerId: ana } })]);
    const stored = async (b: JudgedBatch) => (await storedOf(s, b.ctx.requestId)).map((r) => r.xmin);

    // The first statement waits on a row of its first event's id that another transaction inserted and has not
    // committed: meanwhile 4 events wait for it, a whole statement's worth but fewer than 5, and no second starts.
    const few = await Promise.all([two(), two(), two()]);
    const groups = new StatementGroups(s.db.kysely, { perApp: 2, maxEvents: 4, anotherOnceWaiting: 5 });
    const results = await blockedOn(
      s,
      few[0] as JudgedBatch,
      () => Promise.all(few.map((b) => groups.store(b))),
      async () => {
        await new Promise((r) => setTimeout(r, 300));
        assert.deepEqual(await Promise.all(few.map(stored)), [[], [], []]);
      },
    );
    assert.ok(results.every((r) => granted(r) === 2));
    const [first, second, third] = await Promise.all(few.map(stored));
    assert.equal(second?.length, 2);
    assert.deepEqual(second, third);
    assert.notDeepEqual(first, second);

    // With 6 events waiting, a second statement stores what fits (4) while the first still waits; the rest (2)
    // waits for one of them.
    const many = await Promise.all([two(), two(), two(), two()]);
    await blockedOn(
      s,
      many[0] as JudgedBatch,
      () => Promise.all(many.map((b) => groups.store(b))),
      async () => {
        const beside = many.slice(1, 3);
        for (let tries = 0; (await Promise.all(beside.map(stored))).some((x) => x.length === 0); tries++) {
          assert.ok(tries < 100, 'no second statement stored the batches waiting while the first one waited');
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.deepEqual(await stored(many[0] as JudgedBatch), []);
        assert.deepEqual(await stored(many[3] as JudgedBatch), []);
      },
    );
    const xmins = (await Promise.all(many.map(stored))).map((x) => x[0]);
    assert.equal(xmins[1], xmins[2]);
    assert.equal(new Set(xmins).size, 3);
  });
});

/**
 * Starts `store` while another transaction holds an uncommitted event row with the id of `batch`'s first event, so
 * that the statement storing `batch` waits on it; runs `meanwhile`, then rolls that transaction back and waits for
 * what `store` returns.
 */
async function blockedOn<T>(s: Setup, batch: JudgedBatch, store: () => Promise<T>, meanwhile: () => Promise<void>): Promise<T> {
  const first = batch.candidates[0];
  if (!first) throw new Error('the batch has no event');
  let release = () => {};
  const released = new Promise<void>((r) => (release = r));
  let inserted = () => {};
  let failed: (err: unknown) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    inserted = resolve;
    failed = reject;
  });
  const rollback = new Error('rolled back');
  const holder = s.db.kysely
    .transaction()
    .execute(async (trx) => {
      await trx
        .insertInto('events')
        .values({
          id: first.id,
          org_id: s.tenant.orgId,
          app_id: 'app_blocking',
          worker_id: 'wkr_blocking',
          integration_id: 'int_blocking',
          kind: 'event',
          event_type: 'blocking',
          ts: first.ts,
          request_id: 'req_blocking',
          received_at: first.ts,
        })
        .execute();
      inserted();
      await released;
      throw rollback;
    })
    .catch((err: unknown) => {
      // The row could not be held: fail at once instead of waiting for the test's timeout.
      if (err !== rollback) failed(err);
    });
  await ready;
  const done = store();
  try {
    await meanwhile();
  } finally {
    release();
    await holder;
  }
  return done;
}

/** One statement at a time, so that the batches stored while it runs wait and go together. */
function groupsOf(s: Setup, maxEvents = 1000): StatementGroups {
  return new StatementGroups(s.db.kysely, { perApp: 1, maxEvents, anotherOnceWaiting: maxEvents });
}

function storeAll(s: Setup, batches: JudgedBatch[]): Promise<StatementResult[]> {
  const groups = groupsOf(s);
  return Promise.all(batches.map((b) => groups.store(b)));
}

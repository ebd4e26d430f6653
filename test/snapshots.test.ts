import assert from 'node:assert/strict';
import request from 'supertest';
import type { MetricEntry } from '../src/data/snapshots';
import { addWorker } from '../src/domain/administration';
import { client } from './support/client';
import { assertContract } from './support/contract';
import { metadataOfSize } from './support/events';
import { setup } from './support/fixtures';

const SNAPSHOTS = '/api/v1/ingest/snapshots';

/** The worker's current snapshots (one per app and snapshotType), with their metrics in the stored order. */
async function currentSnapshots(db: Awaited<ReturnType<typeof setup>>['db'], workerId: string) {
  const rows = await db.kysely.selectFrom('current_snapshots').selectAll().where('worker_id', '=', workerId).execute();
  return rows.map((row) => ({ ...row, metrics: JSON.parse(row.metrics) as MetricEntry[] }));
}

function snapshot(overrides: Record<string, unknown> = {}) {
  return {
    snapshotType: 'oncall.load',
    actor: { externalId: 'dana', displayName: 'Dana' },
    metrics: { open: 3 },
    timestamp: '2026-11-20T18:00:00Z',
    ...overrides,
  };
}

describe('POST /api/v1/ingest/snapshots', () => {
  it('answers 202 with the worker, creating it like events do, and keeps the snapshot in history', async () => {
    const { app, db, tenant } = await setup({}, { allowed: [] });
    const res = await client(app).post(SNAPSHOTS, {
      key: tenant.key,
      body: snapshot({
        metrics: { open: 3, rotation: 'primary', ack: { value: 4.5, unit: 'minutes', label: 'Median ack' } },
        metadata: { team: 'ops' },
      }),
    });
    assert.equal(res.status, 202, 'snapshots are not subject to the event whitelist');
    assert.equal(res.body.ok, true);
    assert.equal(res.body.snapshotType, 'oncall.load');
    assert.equal(res.body.worker.displayName, 'Dana');
    assert.match(res.body.worker.id, /^wkr_/);
    const history = await db.kysely.selectFrom('events').selectAll().where('worker_id', '=', res.body.worker.id).execute();
    assert.equal(history.length, 1);
    assert.equal(history[0]?.kind, 'snapshot');
    assert.equal(history[0]?.event_type, 'oncall.load');
    assert.equal(history[0]?.integration_id, `custom:${tenant.slug}`);
    assert.deepEqual(JSON.parse(history[0]?.metrics as string), [
      ['open', 3],
      ['rotation', 'primary'],
      ['ack', { value: 4.5, unit: 'minutes', label: 'Median ack' }],
    ]);
    assert.deepEqual(JSON.parse(history[0]?.metadata as string), { team: 'ops' });
  });

  it('resolves the actor as events do: a directory worker by email, with its own display name', async () => {
    const { app, db, tenant } = await setup();
    const dir = await addWorker(db, { orgId: tenant.orgId, email: 'eve@x.example', name: 'Eve Directory' });
    const res = await client(app).post(SNAPSHOTS, {
      key: tenant.key,
      body: snapshot({ actor: { email: 'EVE@x.example', displayName: 'ignored' } }),
    });
    assert.equal(res.status, 202);
    assert.deepEqual(res.body.worker, { id: dir.id, displayName: 'Eve Directory' });
  });

  const refusals: Array<[string, Record<string, unknown>, number, string, RegExp]> = [
    ['a metric label of 121 chars', { metrics: { label: 'x'.repeat(121) } }, 400, 'invalid_body', /\/metrics\/label/],
    ['a metric object with an unknown unit', { metrics: { m: { value: 1, unit: 'furlongs' } } }, 400, 'invalid_body', /\/metrics\/m/],
    ['a metric object without value', { metrics: { m: { unit: 'count' } } }, 400, 'invalid_body', /\/metrics\/m/],
    ['a metric that is a list', { metrics: { m: [1] } }, 400, 'invalid_body', /\/metrics\/m does not match any allowed form/],
    ['no metrics', { metrics: {} }, 400, 'invalid_body', /\/metrics must NOT have fewer than 1 properties/],
    [
      '65 metrics',
      { metrics: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`m${i}`, i])) },
      400,
      'invalid_body',
      /\/metrics must NOT have more than 64 properties/,
    ],
    [
      'a metric identifier with a space',
      { metrics: { 'bad id': 1 } },
      400,
      'invalid_body',
      /\/metrics has an invalid property name "bad id"/,
    ],
    ['a snapshotType of 2 chars', { snapshotType: 'ab' }, 400, 'invalid_body', /\/snapshotType must match pattern/],
    ['a timestamp without offset', { timestamp: '2026-11-20T18:00:00' }, 400, 'invalid_body', /\/timestamp must be an ISO 8601 date-time/],
    [
      'a timestamp before the year 0000 in UTC',
      { timestamp: '0000-01-01T00:00:00+00:01' },
      400,
      'invalid_body',
      /\/timestamp is not a real point in time within the years 0000 to 9999/,
    ],
    ['metadata over 16 KB', { metadata: metadataOfSize(16385) }, 400, 'invalid_body', /\/metadata must be at most 16384 bytes/],
    [
      'an actor with no identifying field',
      { actor: { displayName: 'Nobody' } },
      400,
      'missing_actor',
      /\/actor must have at least one of workerId, externalId, email/,
    ],
    ['no actor', { actor: undefined }, 400, 'missing_actor', /\/actor/],
    ['an unknown workerId', { actor: { workerId: 'wkr_000000000nothing' } }, 404, 'worker_not_found', /workerId "wkr_000000000nothing"/],
    [
      'a NUL in displayName (PostgreSQL text cannot hold it)',
      { actor: { externalId: 'nul', displayName: 'a\u0000' } },
      400,
      'invalid_body',
      /\/actor\/displayName must match pattern/,
    ],
  ];
  for (const [what, overrides, status, code, message] of refusals) {
    it(`refuses ${what}: ${status} ${code}, storing nothing`, async () => {
      const { app, db, tenant } = await setup();
      const res = await client(app).post(SNAPSHOTS, { key: tenant.key, body: snapshot(overrides) });
      assert.equal(res.status, status);
      assert.equal(res.body.error.code, code);
      assert.match(res.body.error.message, message);
      assert.equal((await db.kysely.selectFrom('events').select('id').where('org_id', '=', tenant.orgId).execute()).length, 0);
    });
  }

  it('accepts each metric form at its limits: numbers, a 120-char label, 64 metrics', async () => {
    const { app, tenant } = await setup();
    const metrics = Object.fromEntries(
      Array.from({ length: 64 }, (_, i) => [
        `m${i}`,
        i % 3 === 0 ? -1.5 : i % 3 === 1 ? 'x'.repeat(120) : { value: 0, unit: 'percentage', label: 'p' },
      ]),
    );
    const res = await client(app).post(SNAPSHOTS, { key: tenant.key, body: snapshot({ metrics }) });
    assert.equal(res.status, 202);
  });

  it('replaces the current snapshot only with an equal or newer timestamp; older ones stay in history only', async () => {
    const { app, db, tenant } = await setup();
    const api = client(app);
    const post = async (timestamp: string, open: number) => {
      const res = await api.post(SNAPSHOTS, { key: tenant.key, body: snapshot({ timestamp, metrics: { open } }) });
      assert.equal(res.status, 202, 'an older snapshot is stored too, in history');
      return res;
    };
    const first = await post('2026-11-20T18:00:00Z', 1);
    await post('2026-11-20T17:00:00Z', 2);
    const workerId = first.body.worker.id;
    assert.deepEqual((await currentSnapshots(db, workerId))[0]?.metrics, [['open', 1]], 'an older snapshot does not replace');
    await post('2026-11-20T20:00:00+02:00', 3);
    assert.deepEqual((await currentSnapshots(db, workerId))[0]?.metrics, [['open', 3]], 'an equal timestamp replaces');
    await post('2026-11-21T00:00:00Z', 4);
    assert.deepEqual((await currentSnapshots(db, workerId))[0]?.metrics, [['open', 4]], 'a newer one replaces');
    const history = await db.kysely.selectFrom('events').select('metrics').where('worker_id', '=', workerId).execute();
    assert.equal(history.length, 4, 'every snapshot is kept in history');
  });

  it('keeps the sent order even for integer-like metric identifiers, which JavaScript objects would move first', async () => {
    const { app, db, tenant } = await setup();
    const body =
      '{"snapshotType":"load.now","actor":{"externalId":"ordered"},"metrics":{"b":1,  "2024" :2,"a":{"value":3,"label":"{\\"}"},"7":4,"c":5}}';
    const res = await request(app)
      .post(SNAPSHOTS)
      .set('Authorization', `Bearer ${tenant.key}`)
      .set('Content-Type', 'application/json')
      .send(body);
    assertContract(res);
    assert.equal(res.status, 202);
    const [current] = await currentSnapshots(db, res.body.worker.id);
    assert.deepEqual(
      current?.metrics.map(([id]) => id),
      ['b', '2024', 'a', '7', 'c'],
    );
  });
});

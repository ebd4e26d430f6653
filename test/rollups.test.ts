import assert from 'node:assert/strict';
import { sql, type KyselyPlugin } from 'kysely';
import pino from 'pino';
import { runIngestctl } from '../src/cli/ingestctl';
import { changeAllowedEventTypes, createApp, issueKey, updateOrganization } from '../src/domain/administration';
import { firstWholeDay, RetentionSweeper } from '../src/domain/retention';
import { verifyRollups } from '../src/domain/rollup-verify';
import { DayListCache } from '../src/data/day-list-cache';
import type { Db } from '../src/data/db';
import {
  addParts,
  deleteRollupsBefore,
  packCells,
  readState,
  readWorkerDays,
  takeLease,
  unlistedDays,
  type PackedCells,
} from '../src/data/rollups';
import type { Writer } from '../src/data/writer';
import { CommittedSums, drainRollupOutbox, sumWaitingBatches, type Drained } from '../src/domain/rollup-drain';
import { sumNextChunk } from '../src/domain/rollup-recompute';
import { RollupWorker } from '../src/domain/rollups';
import { runWrite, type WriteJobTable } from '../src/domain/writes';
import { testDialect } from './support/database';
import { databaseUrlOf, silentLogger } from './support/fixtures';
import { client } from './support/client';
import { signIn } from './support/console';
import { ingest } from './support/console-data';
import { eventually } from './support/eventually';
import { dayValues, definition, rollupWorld, storedDefinition } from './support/rollups';

const DAILY = '/api/v1/console/statistics/daily';

describe('Daily rollups: values', () => {
  it('count: every day of the range present, 0 without events, the number of matching events otherwise', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }, { timestamp: '2026-11-02T11:00:00Z' }, { timestamp: '2026-11-04T11:00:00Z' }]);
    const body = await w.daily({ from: '2026-11-01', to: '2026-11-04' });
    assert.equal(body.timeZone, 'UTC');
    assert.equal(body.items.length, 1);
    assert.deepEqual(dayValues(body.items[0]), [
      ['2026-11-01', 0, 0],
      ['2026-11-02', 2, 2],
      ['2026-11-03', 0, 0],
      ['2026-11-04', 1, 1],
    ]);
    assert.deepEqual(body.items[0]?.total, { value: 3, count: 3 });
    assert.deepEqual(body.items[0]?.status.state, 'current');
  });

  it('sumField: finite numbers at a dotted valueField only; missing and non-numeric values add nothing but count', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('points', { aggregation: 'sumField', valueField: 'ticket.points' })]);
    const ts = '2026-11-02T10:00:00Z';
    await w.send([
      { timestamp: ts, metadata: { ticket: { points: 3 } } },
      { timestamp: ts, metadata: { ticket: { points: 2.5 } } },
      { timestamp: ts, metadata: { ticket: { points: '7' } } },
      { timestamp: ts, metadata: { ticket: { points: true } } },
      { timestamp: ts, metadata: { ticket: {} } },
      { timestamp: ts, metadata: { 'ticket.points': 100 } },
      { timestamp: ts },
    ]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-02' });
    assert.deepEqual(body.items[0]?.total, { value: 5.5, count: 7 });
  });

  it('sumField with no events is 0', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('points', { aggregation: 'sumField', valueField: 'points' })]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-03' });
    assert.deepEqual(dayValues(body.items[0]), [
      ['2026-11-02', 0, 0],
      ['2026-11-03', 0, 0],
    ]);
  });

  it('durationMinutes: the sum of duration / 60; an event without duration adds 0', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('time', { aggregation: 'durationMinutes', format: 'duration_minutes' })]);
    const ts = '2026-11-02T10:00:00Z';
    await w.send([{ timestamp: ts, duration: 90 }, { timestamp: ts, duration: 30 }, { timestamp: ts }]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-02' });
    assert.deepEqual(body.items[0]?.total, { value: 2, count: 3 });
  });

  it('rate: a day is its count; a range is the count divided by its days', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('pace', { aggregation: 'rate', format: 'rate_per_day' })]);
    await w.send([{ timestamp: '2026-11-01T10:00:00Z' }, { timestamp: '2026-11-01T11:00:00Z' }, { timestamp: '2026-11-03T10:00:00Z' }]);
    const body = await w.daily({ from: '2026-11-01', to: '2026-11-04' });
    assert.deepEqual(
      dayValues(body.items[0]).map(([, v]) => v),
      [2, 0, 1, 0],
    );
    assert.deepEqual(body.items[0]?.total, { value: 0.75, count: 3 });
  });

  it('ratio: booleans as 1 and 0 and finite numbers averaged; others left out; null on a zero denominator', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('first-time', { aggregation: 'ratio', valueField: 'ok', format: 'percent' })]);
    const ts = '2026-11-02T10:00:00Z';
    await w.send([
      { timestamp: ts, metadata: { ok: true } },
      { timestamp: ts, metadata: { ok: false } },
      { timestamp: ts, metadata: { ok: 1 } },
      { timestamp: ts, metadata: { ok: 'yes' } },
      { timestamp: ts, metadata: {} },
    ]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-03' });
    const [first, second] = body.items[0]?.days ?? [];
    assert.deepEqual(first, { day: '2026-11-02', value: 2 / 3, count: 5, numerator: 2, denominator: 3 });
    assert.deepEqual(second, { day: '2026-11-03', value: null, count: 0, numerator: 0, denominator: 0 });
    assert.deepEqual(body.items[0]?.total, { value: 2 / 3, count: 5, numerator: 2, denominator: 3 });
  });

  it('two batches for the same worker and day add up', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    const actor = { externalId: 'same' };
    await w.send([{ timestamp: '2026-11-02T10:00:00Z', actor }]);
    await w.send([
      { timestamp: '2026-11-02T12:00:00Z', actor },
      { timestamp: '2026-11-02T13:00:00Z', actor },
    ]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-02', groupBy: 'worker' });
    assert.equal(body.items.length, 1);
    assert.deepEqual(body.items[0]?.total, { value: 3, count: 3 });
  });

  it('a late event (days in the past) counts on its own day', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.send([{ timestamp: '2026-11-05T10:00:00Z' }]);
    await w.daily({ from: '2026-11-01', to: '2026-11-05' });
    await w.send([{ timestamp: '2026-11-01T10:00:00Z' }]);
    const body = await w.daily({ from: '2026-11-01', to: '2026-11-05' });
    assert.deepEqual(
      dayValues(body.items[0]).map(([, v]) => v),
      [1, 0, 0, 0, 1],
    );
  });
});

describe('Daily rollups: days in the organization time zone', () => {
  const cases: { zone: string; edges: [string, string][] }[] = [
    {
      zone: 'Europe/Berlin',
      edges: [
        // [instant, local day]: 23:59:59 and 00:00:00 local, an ordinary day and both daylight-saving days
        ['2026-11-10T22:59:59Z', '2026-11-10'],
        ['2026-11-10T23:00:00Z', '2026-11-11'],
        ['2026-03-28T22:59:59Z', '2026-03-28'],
        ['2026-03-28T23:00:00Z', '2026-03-29'],
        ['2026-03-29T21:59:59Z', '2026-03-29'],
        ['2026-03-29T22:00:00Z', '2026-03-30'],
        ['2026-10-24T21:59:59Z', '2026-10-24'],
        ['2026-10-24T22:00:00Z', '2026-10-25'],
        ['2026-10-25T22:59:59Z', '2026-10-25'],
        ['2026-10-25T23:00:00Z', '2026-10-26'],
      ],
    },
    {
      zone: 'America/Los_Angeles',
      edges: [
        ['2026-11-11T07:59:59Z', '2026-11-10'],
        ['2026-11-11T08:00:00Z', '2026-11-11'],
        ['2026-03-08T07:59:59Z', '2026-03-07'],
        ['2026-03-08T08:00:00Z', '2026-03-08'],
        ['2026-03-09T06:59:59Z', '2026-03-08'],
        ['2026-03-09T07:00:00Z', '2026-03-09'],
        ['2026-11-01T06:59:59Z', '2026-10-31'],
        ['2026-11-01T07:00:00Z', '2026-11-01'],
        ['2026-11-02T07:59:59Z', '2026-11-01'],
        ['2026-11-02T08:00:00Z', '2026-11-02'],
      ],
    },
  ];
  for (const { zone, edges } of cases) {
    it(`counts an event at 23:59:59 and at 00:00:00 local time on its own day in ${zone}, daylight-saving days included`, async () => {
      const w = await rollupWorld();
      await updateOrganization(w.db, w.tenant.orgId, { timeZone: zone });
      await w.putManifest([w.def('done')]);
      // Each edge on its own worker, so that each instant is checked alone.
      await w.send(edges.map(([timestamp], i) => ({ timestamp, actor: { externalId: `edge-${i}` } })));
      const body = await w.daily({ from: '2026-03-01', to: '2026-11-30', groupBy: 'worker', limit: '1000' });
      assert.equal(body.timeZone, zone);
      const dayOfWorker = new Map(body.items.map((s) => [s.worker?.displayName, s.days.filter((d) => d.count > 0).map((d) => d.day)]));
      edges.forEach(([instant, day], i) => assert.deepEqual(dayOfWorker.get(`edge-${i}`), [day], `${instant} in ${zone}`));
    });
  }

  it('counts events at the ends of the years a timestamp can have on their local days, those beyond included, through a recompute', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.send([
      { timestamp: '0999-05-01T12:00:00Z', actor: { externalId: 'early' } },
      { timestamp: '9999-12-31T09:00:00Z', actor: { externalId: 'late' } },
      { timestamp: '9999-12-31T23:00:00Z', actor: { externalId: 'late' } },
    ]);
    // +14:00: the last event's local day is 10000-01-01, which no range of the API reaches.
    await updateOrganization(w.db, w.tenant.orgId, { timeZone: 'Pacific/Kiritimati' });
    const late = await w.daily({ from: '9999-12-30', to: '9999-12-31' });
    assert.equal(late.items[0]?.status.state, 'current', 'the recompute is done');
    assert.deepEqual(dayValues(late.items[0]), [
      ['9999-12-30', 0, 0],
      ['9999-12-31', 1, 1],
    ]);
    const early = await w.daily({ from: '0999-05-01', to: '0999-05-01' });
    assert.deepEqual(dayValues(early.items[0]), [['0999-05-01', 1, 1]], 'a year before 1000 is written with four digits');
    const verified = await verifyRollups(w.db, w.tenant.orgId);
    assert.deepEqual(verified.differences, []);
  });

  it('a time-zone change recomputes past days in the new zone', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.send([{ timestamp: '2026-11-10T23:30:00Z' }]);
    assert.deepEqual(
      dayValues((await w.daily({ from: '2026-11-10', to: '2026-11-11' })).items[0]).map(([, v]) => v),
      [1, 0],
    );
    await updateOrganization(w.db, w.tenant.orgId, { timeZone: 'Europe/Berlin' });
    const during = await w.dailyNow({ from: '2026-11-10', to: '2026-11-11' });
    assert.equal(during.items[0]?.status.state, 'recomputing', 'until the recompute is done, the answer says so');
    assert.equal(during.timeZone, 'UTC', 'and comes whole from the previous rollups');
    const after = await w.daily({ from: '2026-11-10', to: '2026-11-11' });
    assert.equal(after.timeZone, 'Europe/Berlin');
    assert.equal(after.items[0]?.status.state, 'current');
    assert.deepEqual(
      dayValues(after.items[0]).map(([, v]) => v),
      [0, 1],
    );
  });
});

describe('Daily rollups: matching', () => {
  it('statisticId names one definition; without it, type and category match every definition not owned by an extractor', async () => {
    const w = await rollupWorld();
    await w.putManifest([
      w.def('a'),
      w.def('b'),
      w.def('owned', { ownedBy: 'extractor' }),
      w.def('builds', { sourceEventTypes: ['build.finished'], sourceEventCategories: ['CODE_CHANGE'] }),
    ]);
    const ts = '2026-11-02T10:00:00Z';
    const slug = w.tenant.slug;
    await w.send([
      { timestamp: ts }, // a, b
      { timestamp: ts, statisticId: `${slug}.a` }, // a only
      { timestamp: ts, statisticId: `${slug}.owned` }, // owned only
      { timestamp: ts, category: 'CODE_CHANGE' }, // category does not match a or b
      { timestamp: ts, eventType: 'build.finished', category: 'CODE_CHANGE' }, // builds
      { timestamp: ts, eventType: 'build.finished', category: 'CODE_CHANGE', statisticId: `${slug}.b` }, // b, by name
    ]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-02' });
    const counts = Object.fromEntries(body.items.map((s) => [s.statisticId.slice(slug.length + 1), s.total.count]));
    assert.deepEqual(counts, { a: 2, b: 2, owned: 1, builds: 1 });
  });
});

describe('Daily rollups: manifest replaced', () => {
  it('recomputes the past under the new manifest (added, changed, removed), saying recomputing until done and never mixing', async () => {
    const w = await rollupWorld();
    const slug = w.tenant.slug;
    await w.putManifest([w.def('kept'), w.def('changed'), w.def('removed')]);
    await w.send([
      { timestamp: '2026-11-02T10:00:00Z', duration: 120 },
      { timestamp: '2026-11-03T10:00:00Z', duration: 60 },
    ]);
    await w.daily({ from: '2026-11-02', to: '2026-11-03' });

    await w.putManifest([w.def('kept'), w.def('changed', { aggregation: 'durationMinutes' }), w.def('added', { aggregation: 'rate' })]);
    // Sent while the recompute is pending: it must end up counted once, in the new rollups only.
    await w.send([{ timestamp: '2026-11-03T12:00:00Z', duration: 60 }]);
    const during = await w.dailyNow({ from: '2026-11-02', to: '2026-11-03' });
    assert.deepEqual(
      during.items.map((s) => [s.statisticId, s.status.state, s.status.computedThrough === null, s.total.count]),
      [
        [`${slug}.kept`, 'recomputing', false, 2],
        [`${slug}.changed`, 'recomputing', false, 2],
        [`${slug}.added`, 'recomputing', true, 0],
      ],
    );

    const after = await w.daily({ from: '2026-11-02', to: '2026-11-03' });
    assert.deepEqual(
      after.items.map((s) => [s.statisticId, s.status.state, s.total]),
      [
        [`${slug}.kept`, 'current', { value: 3, count: 3 }],
        [`${slug}.changed`, 'current', { value: 4, count: 3 }],
        [`${slug}.added`, 'current', { value: 1.5, count: 3 }],
      ],
    );
    const list = await w.api.get('/api/v1/console/statistics');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.items.map((i: { definition: { id: string } }) => i.definition.id),
      [`${slug}.kept`, `${slug}.changed`, `${slug}.added`],
    );
    assert.ok(list.body.items.every((i: { status: { state: string } }) => i.status.state === 'current'));
    // The replaced generations' rows are gone.
    const generations = await w.db.kysely
      .selectFrom('rollup_days')
      .select('generation')
      .distinct()
      .where('org_id', '=', w.tenant.orgId)
      .execute();
    assert.equal(generations.length, 1);
  });

  it('a manifest replaced again during a recompute: the last one wins, each event once', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('a')]);
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    await w.services.rollups.catchUp();
    await w.putManifest([w.def('a', { label: 'first' })]);
    await w.send([{ timestamp: '2026-11-02T11:00:00Z' }]);
    await w.services.rollups.drainOnce(); // the batch goes into the generation being recomputed
    await w.putManifest([w.def('a', { label: 'second' })]);
    await w.send([{ timestamp: '2026-11-02T12:00:00Z' }]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-02' });
    assert.deepEqual(body.items[0]?.total, { value: 3, count: 3 });
    assert.equal(body.items[0]?.label, 'second');
  });
});

describe('Daily rollups: a recompute values stored events as new batches are valued', () => {
  it('dotted paths into objects only, numbers at their limits, booleans, durations', async () => {
    const w = await rollupWorld();
    const definitions = [
      w.def('points', { aggregation: 'sumField', valueField: 'a.b' }),
      w.def('share', { aggregation: 'ratio', valueField: 'a.b', format: 'percent' }),
      w.def('size', { aggregation: 'sumField', valueField: 'v' }),
      w.def('largest', { aggregation: 'sumField', valueField: 'w' }),
      w.def('first', { aggregation: 'sumField', valueField: 'list.0' }),
      w.def('time', { aggregation: 'durationMinutes', format: 'duration_minutes' }),
    ];
    await w.putManifest(definitions);
    const ts = '2026-11-02T10:00:00Z';
    await w.send([
      { timestamp: ts, duration: 90, metadata: { a: { b: 2 }, v: 1e21 } },
      { timestamp: ts, metadata: { a: { b: true }, v: 5e-324 } },
      { timestamp: ts, metadata: { a: [{ b: 100 }], v: 1.5e-7, list: [4] } }, // an array is not walked into
      { timestamp: ts, metadata: { list: { '0': 3 } } },
      { timestamp: ts, metadata: { a: { b: '3' }, w: 1.7976931348623157e308 } },
      { timestamp: ts, metadata: { 'a.b': 50, a: { b: false } } },
      { timestamp: ts, metadata: { a: { b: -0.25, c: { b: 9 } } } },
      { timestamp: ts, metadata: { a: null, v: '7' } },
      { timestamp: ts, duration: 30 },
    ]);
    const totals = async () => (await w.daily({ from: '2026-11-02', to: '2026-11-02' })).items.map((s) => [s.statisticId, s.total]);
    const added = await totals();
    assert.deepEqual(added, [
      [`${w.tenant.slug}.points`, { value: 1.75, count: 9 }],
      [`${w.tenant.slug}.share`, { value: 0.6875, count: 9, numerator: 2.75, denominator: 4 }],
      [`${w.tenant.slug}.size`, { value: 1e21, count: 9 }],
      [`${w.tenant.slug}.largest`, { value: 1.7976931348623157e308, count: 9 }],
      [`${w.tenant.slug}.first`, { value: 3, count: 9 }],
      [`${w.tenant.slug}.time`, { value: 2, count: 9 }],
    ]);
    // The same manifest again: everything recomputed from the stored events, to the same totals, by
    // PostgreSQL itself (a chunk it could not read would be summed by the service, with a warning).
    await w.putManifest(definitions);
    const warnings: string[] = [];
    await new RollupWorker(w.db, { logger: pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) }) }).catchUp();
    assert.deepEqual(warnings, []);
    assert.deepEqual(await totals(), added);
  });

  it('a batch or a chunk whose metadata PostgreSQL cannot read (a \\u0000 escape) is summed by the service instead', async () => {
    const w = await rollupWorld();
    const definitions = [w.def('share', { aggregation: 'ratio', valueField: 'a.b', format: 'percent' })];
    await w.putManifest(definitions);
    const ts = '2026-11-02T10:00:00Z';
    await w.send([
      { timestamp: ts, metadata: { a: { b: 1 }, note: 'a \u0000 inside' } },
      { timestamp: ts, metadata: { a: { b: 0 }, 'key \u0000': 1 } },
      { timestamp: ts, metadata: { a: { b: true } } },
    ]);
    const warnings: string[] = [];
    const worker = new RollupWorker(w.db, { logger: pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) }) });
    const expected = { value: 2 / 3, count: 3, numerator: 2, denominator: 3 };
    await worker.catchUp();
    assert.deepEqual((await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' })).items[0]?.total, expected, 'the batch');
    await w.putManifest(definitions);
    await worker.catchUp();
    const body = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' });
    assert.equal(body.items[0]?.status.state, 'current');
    assert.deepEqual(body.items[0]?.total, expected, 'the recompute');
    const fallbacks = warnings.map((line) => (JSON.parse(line) as { msg: string }).msg);
    assert.deepEqual(
      fallbacks,
      w.db.dialect === 'postgres'
        ? [
            'rollups: PostgreSQL could not read the metadata of a batch; the service sums it',
            'rollups: PostgreSQL could not read a chunk of the recompute; the service sums it',
          ]
        : [],
    );
  });

  it('a batch whose events span centuries is added exactly, each on its day', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.send([{ timestamp: '0000-01-01T00:00:00Z' }, { timestamp: '2026-11-02T10:00:00Z' }, { timestamp: '9999-12-31T23:59:59Z' }]);
    for (const day of ['0000-01-01', '2026-11-02', '9999-12-31']) {
      assert.deepEqual(dayValues((await w.daily({ from: day, to: day })).items[0]), [[day, 1, 1]]);
    }
  });

  it("an app's events count for its own manifest only", async () => {
    const w = await rollupWorld();
    const other = await createApp(w.db, { orgId: w.tenant.orgId, slug: `${w.tenant.slug}-b`, name: 'Other', asEmail: w.tenant.ownerEmail });
    await changeAllowedEventTypes(w.db, other.id, ['ticket.resolved'], true);
    const otherKey = (await issueKey(w.db, other.id)).key;
    await w.putManifest([w.def('done')]);
    const res = await client(w.app).put('/api/v1/apps/statistics', {
      key: otherKey,
      body: { statistics: [definition(`${w.tenant.slug}-b`, 'done')] },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    await ingest(w.app, otherKey, [{ timestamp: '2026-11-02T10:00:00Z' }, { timestamp: '2026-11-02T11:00:00Z' }]);
    await w.catchUp(); // the batches leave the outbox: the recompute reads them
    await w.putManifest([w.def('done', { label: 'again' })]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-02', statisticId: [`${w.tenant.slug}.done`, `${w.tenant.slug}-b.done`] });
    assert.deepEqual(
      body.items.map((s) => [s.statisticId, s.total.count]),
      [
        [`${w.tenant.slug}.done`, 1],
        [`${w.tenant.slug}-b.done`, 2],
      ],
    );
  });

  it('ends a chunk after the events it read, however few of them count, and within days of its first', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    // Six events over a year: the days between them are no chunk's.
    await w.send(
      ['2026-01-05', '2026-01-06', '2026-03-01', '2026-07-01', '2026-07-02', '2026-12-30'].map((d) => ({ timestamp: `${d}T10:00:00Z` })),
    );
    await w.catchUp();
    await w.putManifest([w.def('done', { label: 'again' })]);
    // Batches committed during the recompute: read by its chunks, counted by the outbox.
    await w.send([{ timestamp: '2026-01-05T11:00:00Z' }, { timestamp: '2026-01-05T12:00:00Z' }]);
    await w.services.rollups.drainOnce();
    const worker = new RollupWorker(w.db, { chunk: 2 });
    const positions: (string | null)[] = [];
    while (await worker.recomputeOnce()) {
      const state = await w.db.kysely
        .selectFrom('rollup_state')
        .select('scan_ts')
        .where('org_id', '=', w.tenant.orgId)
        .executeTakeFirstOrThrow();
      positions.push(state.scan_ts);
    }
    assert.deepEqual(positions, [
      '2026-01-05T11:00:00.000Z', // two read, one counts
      '2026-01-06T10:00:00.000Z',
      '2026-03-01T10:00:00.000Z', // the next event is months later
      '2026-07-02T10:00:00.000Z',
      '2026-12-30T10:00:00.000Z',
      null, // done
    ]);
    const body = await w.dailyNow({ from: '2026-01-01', to: '2026-12-31' });
    assert.deepEqual(body.items[0]?.total, { value: 8, count: 8 });
  });
});

/** What `work` answers while another transaction (another instance) holds the outbox row of the batch `batchId`. */
/** Each packed cell's worker and count, in order. */
function workerCounts(cells: PackedCells | undefined): [string | undefined, number | undefined][] {
  if (!cells) return [];
  return Array.from({ length: cells.keys.length / 4 }, (_, c) => [cells.names[cells.keys[c * 4 + 1] ?? -1], cells.parts[c * 4]]);
}

async function whileHeld<T>(db: Db, batchId: string | undefined, work: () => Promise<T>): Promise<T> {
  return db.kysely.transaction().execute(async (trx) => {
    await trx
      .selectFrom('rollup_outbox')
      .select('id')
      .where('id', '=', batchId ?? '')
      .forUpdate()
      .execute();
    return work();
  });
}

describe('Daily rollups: workers, exactly once, leases', () => {
  it('keeps adding without a pause while a backlog is waiting: the pause is only for batches committed after the last', async () => {
    const w = await rollupWorld({ rollups: { claim: 2, coalesceMs: 600_000, pollMs: 600_000 } });
    await w.putManifest([w.def('done')]);
    for (let i = 0; i < 9; i++) await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    w.services.rollups.start();
    const body = await eventually(
      () => w.dailyNow({ from: '2026-11-02', to: '2026-11-02' }),
      (b) => b.items[0]?.total.count === 9,
    );
    assert.deepEqual(body.items[0]?.total, { value: 9, count: 9 }, 'nine batches, two a transaction, no ten-minute pause between');
  });

  it('a committed batch wakes the running worker: it does not wait for its next poll', async () => {
    const w = await rollupWorld({ rollups: { pollMs: 600_000 } });
    await w.putManifest([w.def('done')]);
    await w.catchUp();
    w.services.rollups.start();
    await new Promise((resolve) => setTimeout(resolve, 100)); // asleep until its next poll, in ten minutes
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    const body = await eventually(
      () => w.dailyNow({ from: '2026-11-02', to: '2026-11-02' }),
      (b) => b.items[0]?.status.state === 'current' && b.items[0]?.total.count === 1,
    );
    assert.deepEqual(body.items[0]?.total, { value: 1, count: 1 });
  });

  it('the running worker lists the closed days itself, one step after another while nothing else is waiting', async () => {
    const w = await rollupWorld({ rollups: { pollMs: 600_000 } });
    await w.putManifest([w.def('done')]);
    // 25 closed days: more than one step lists.
    await w.send(Array.from({ length: 25 }, (_, i) => ({ timestamp: `2026-10-${String(i + 1).padStart(2, '0')}T10:00:00Z` })));
    while ((await w.services.rollups.drainOnce()) > 0);
    w.services.rollups.start();
    const listed = () => w.db.kysely.selectFrom('rollup_day_lists').select('day').where('org_id', '=', w.tenant.orgId).execute();
    const days = await eventually(listed, (rows) => rows.length === 25);
    assert.equal(days.length, 25, 'every closed day listed, no ten-minute poll between two steps');
  });

  it('a look for days to list takes a few organizations at a time, in turn: one with more days than a step does not hold the next up', async () => {
    const first = await rollupWorld({ rollups: { listOrganizations: 1 } });
    const second = await rollupWorld();
    // The first organization (its id comes first) has 25 closed days, more than a step lists; the second one.
    const days = (n: number) => Array.from({ length: n }, (_, i) => ({ timestamp: `2026-10-${String(i + 1).padStart(2, '0')}T10:00:00Z` }));
    for (const [w, n] of [
      [first, 25],
      [second, 1],
    ] as const) {
      await w.putManifest([w.def('done')]);
      await w.send(days(n));
      // Caught up, but not listed: the manifest's recompute done, the batch added.
      while ((await w.services.rollups.drainOnce()) > 0 || (await w.services.rollups.recomputeOnce()));
    }
    assert.ok(first.tenant.orgId < second.tenant.orgId);
    const organizations = await first.db.kysely.selectFrom('rollup_state').select('org_id').execute();
    // One round: a look per organization.
    for (let look = 0; look < organizations.length; look++) await first.services.rollups.listOnce();
    const listed = async (orgId: string) =>
      (await first.db.kysely.selectFrom('rollup_day_lists').select('day').where('org_id', '=', orgId).execute()).length;
    assert.deepEqual([await listed(first.tenant.orgId), await listed(second.tenant.orgId)], [20, 1]);
    while (!(await first.services.rollups.listOnce()).settled);
    assert.equal(await listed(first.tenant.orgId), 25, 'the rest in the next round');
  });

  it('each batch counts once when two workers drain the outbox at the same time', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.catchUp();
    for (let i = 0; i < 10; i++)
      await w.send(Array.from({ length: 5 }, (_, j) => ({ timestamp: '2026-11-02T10:00:00Z', actor: { externalId: `w${j}` } })));
    const other = new RollupWorker(w.db);
    await Promise.all([other.catchUp(), w.catchUp(), other.catchUp()]);
    const body = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' });
    assert.deepEqual(body.items[0]?.total, { value: 50, count: 50 });
  });

  it('PostgreSQL: a drain adds the events of the batches it took only, though the ids of others lie between theirs', async function () {
    const w = await rollupWorld();
    if (w.db.dialect !== 'postgres') this.skip();
    await w.putManifest([w.def('done')]);
    await w.catchUp();
    const at = (hour: number) => ({ timestamp: `2026-11-02T${hour}:00:00Z` });
    await w.send([at(10), at(11)]);
    const [held] = await w.send([at(12), at(13), at(14)]);
    await w.send([at(15), at(16), at(17), at(18)]);
    // Drawn apart from the others: read as a second range of ids.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await w.send([at(19)]);
    // Another instance holds the middle batch.
    const drained = await whileHeld(w.db, held, () =>
      w.db.kysely.transaction().execute((other) => drainRollupOutbox(other, { claim: 10 })),
    );
    assert.equal(drained.added.length, 3);
    const total = async () => (await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' })).items[0]?.total;
    assert.deepEqual(await total(), { value: 7, count: 7 });
    await w.catchUp();
    assert.deepEqual(await total(), { value: 10, count: 10 });
  });

  /** Drains the waiting batches as the rollups worker does, without the events this process kept; answers the statements run. */
  async function drainRecorded(w: Awaited<ReturnType<typeof rollupWorld>>): Promise<{ drained: Drained; statements: string[] }> {
    const statements: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: ({ node, queryId }) => {
        statements.push(w.db.kysely.getExecutor().compileQuery(node, queryId).sql);
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    const drained =
      w.db.dialect === 'postgres'
        ? await w.db.kysely.transaction().execute((trx) => drainRollupOutbox(trx.withPlugin(recorder), { claim: 10 }))
        : await runWrite(w.db, 'addSummedBatches', {
            dialect: 'sqlite',
            summed: await sumWaitingBatches(w.db.kysely.withPlugin(recorder), 10),
          });
    assert.ok(statements.length > 0);
    return { drained, statements };
  }

  const readsEvents = (text: string) => /\bfrom "?events"?(\s|$)/i.test(text);

  it('an organization without statistics has its batches taken from the outbox without its events being read', async () => {
    const w = await rollupWorld();
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }, { timestamp: '2026-11-02T11:00:00Z' }]);
    const { drained, statements } = await drainRecorded(w);
    assert.equal(drained.added.length, 1, 'the batch left the outbox');
    assert.deepEqual(statements.filter(readsEvents), []);
  });

  it("a drain reads its batches' events once, to sum them: the days they fall on are known from their outbox rows", async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.catchUp();
    // Out of order: the batch's first and last events are not its earliest and latest.
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }, { timestamp: '2026-11-03T10:00:00Z' }, { timestamp: '2026-11-01T10:00:00Z' }]);
    const { drained, statements } = await drainRecorded(w);
    assert.equal(drained.added.length, 1, 'the batch was added');
    assert.equal(statements.filter(readsEvents).length, 1, statements.join('\n'));
    const body = await w.dailyNow({ from: '2026-11-01', to: '2026-11-03' });
    assert.deepEqual(dayValues(body.items[0]), [
      ['2026-11-01', 1, 1],
      ['2026-11-02', 1, 1],
      ['2026-11-03', 1, 1],
    ]);
  });

  /**
   * A world with the statistic `done` whose worker has read its rules (an organization's first batch is read
   * back, and the drain after it reads them): the batches sent next are summed as they commit.
   */
  async function summingWorld() {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.send([{ timestamp: '2026-11-02T09:00:00Z' }]);
    await w.catchUp();
    const total = async () => (await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' })).items[0]?.total;
    return { ...w, total };
  }

  it('the batches this process committed are summed as the request sent them, not read back', async () => {
    const w = await summingWorld();
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }, { timestamp: '2026-11-02T11:00:00Z' }]);
    // Read back, the batch would add nothing now.
    await w.db.kysely.deleteFrom('events').where('ts', 'like', '2026-11-02T1%').execute();
    await w.catchUp();
    assert.deepEqual(await w.total(), { value: 3, count: 3 });
  });

  it('sums the batches it committed by the rules the last drain read, a bounded number of batches; others are read back', () => {
    const sums = new CommittedSums(3);
    const event = (workerId: string) => ({
      workerId,
      instant: Date.parse('2026-11-02T10:00:00.000Z'),
      eventType: 'ticket.resolved',
      category: 'TASK_UPDATE',
      statisticId: null,
      duration: null,
      pillar: null,
      metadata: null,
    });
    const batch = (batchId: string, workerIds: string[]) => ({ orgId: 'org', appId: 'app', batchId, events: () => workerIds.map(event) });
    sums.add(batch('a', ['1']));
    assert.deepEqual(sums.organizations(), ['org'], 'its rules are wanted');
    const rules = {
      generation: 1,
      target: null,
      timeZone: 'UTC',
      definitions: new Map([['app', [storedDefinition('s', 'done')]]]),
    };
    assert.deepEqual(sums.take(new Map([['org', rules]])), { summed: [], unsummed: ['a'] }, 'summed without rules: read back');
    sums.add(batch('b', ['1', '2']));
    sums.add(batch('c', ['1']));
    sums.add(batch('d', ['1']));
    sums.add(batch('e', ['1']));
    const { summed, unsummed } = sums.take(new Map([['org', rules]]));
    assert.deepEqual(unsummed, ['e'], 'past the limit a batch is read back by id');
    assert.deepEqual(
      summed.map((s) => [s.orgId, s.generation, s.target, s.batches.map((b) => b.id)]),
      [['org', 1, null, ['b', 'c', 'd']]],
    );
    assert.deepEqual(workerCounts(summed[0]?.cells), [
      ['1', 3],
      ['2', 1],
    ]);
    sums.readBack(['x']);
    assert.deepEqual(sums.take(new Map()), { summed: [], unsummed: ['x'] });
    // The drains stopped: past a hundred times the limit, batches wait for the drains of batches nobody summed.
    const stalled = new CommittedSums(1);
    for (let i = 0; i < 150; i++) stalled.add(batch(`b${i}`, ['1']));
    assert.equal(stalled.take(new Map()).unsummed.length, 100);
    // An app without statistics: its batch is taken, its events never built.
    const unbuilt = new CommittedSums(3);
    unbuilt.take(new Map([['org', rules]]));
    unbuilt.add({ orgId: 'org', appId: 'other', batchId: 'f', events: () => assert.fail('events built for nothing') });
    assert.deepEqual(
      unbuilt.take(new Map()).summed.map((s) => s.batches.map((b) => b.id)),
      [['f']],
    );
  });

  it('sums made as batches commit are not added once the manifest changed: their batches count under the new one', async () => {
    const w = await summingWorld();
    // Summed by the rules of `done` alone as it commits.
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    await w.putManifest([w.def('done'), w.def('also')]);
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-02' });
    assert.deepEqual(
      body.items.map((s) => [s.label, s.total]),
      [
        ['Label done', { value: 2, count: 2 }],
        ['Label also', { value: 2, count: 2 }],
      ],
    );
  });

  it('sums made as batches commit are not added when another drain took one of their batches: each counts once', async () => {
    const w = await summingWorld();
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    await w.send([{ timestamp: '2026-11-02T11:00:00Z' }, { timestamp: '2026-11-02T12:00:00Z' }]);
    // Another instance reads every waiting batch back and adds it.
    assert.equal(await new RollupWorker(w.db).drainOnce(), 2);
    await w.catchUp();
    assert.deepEqual(await w.total(), { value: 4, count: 4 });
  });

  it('PostgreSQL: sums whose batch another instance holds are not added, and the drain does not wait for it', async function () {
    const w = await summingWorld();
    if (w.db.dialect !== 'postgres') this.skip();
    const [held] = await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    await w.send([{ timestamp: '2026-11-02T11:00:00Z' }]);
    // The sums are refused; the batch not held is read back and added.
    assert.equal(await whileHeld(w.db, held, () => w.services.rollups.drainOnce()), 1);
    assert.deepEqual(await w.total(), { value: 2, count: 2 });
    await w.catchUp();
    assert.deepEqual(await w.total(), { value: 3, count: 3 });
  });

  it('a drain leaves the young batches of other processes to them, and reads back those that waited past the hand-over', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.catchUp();
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    const other = new RollupWorker(w.db);
    assert.equal(await other.drainOnce({ handOverMs: 60_000 }), 0, 'young: left to the process that committed it');
    assert.equal(await other.drainOnce({ handOverMs: 0 }), 1, 'past the hand-over: read back');
    const body = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' });
    assert.deepEqual(body.items[0]?.total, { value: 1, count: 1 });
  });

  it('SQLite: sums read before a manifest replacement are not added; their batches are read again under the new manifest', async function () {
    const w = await rollupWorld();
    // PostgreSQL sums a batch in the transaction that claims it: nothing can change in between.
    if (w.db.dialect !== 'sqlite') this.skip();
    await w.putManifest([w.def('done')]);
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }]);
    const summed = await sumWaitingBatches(w.db.kysely, 10);
    assert.equal(summed.length, 1);
    await w.putManifest([w.def('done'), w.def('also')]);
    const drained = await runWrite(w.db, 'addSummedBatches', { dialect: 'sqlite', summed });
    assert.deepEqual(drained, { added: [], left: summed[0]?.batches.map((b) => b.id), unreadable: [] });
    const body = await w.daily({ from: '2026-11-02', to: '2026-11-02' });
    assert.deepEqual(
      body.items.map((s) => [s.label, s.total]),
      [
        ['Label done', { value: 1, count: 1 }],
        ['Label also', { value: 1, count: 1 }],
      ],
    );
  });

  it('SQLite: sums read twice are added once: the second finds their batches gone', async function () {
    const w = await rollupWorld();
    if (w.db.dialect !== 'sqlite') this.skip();
    await w.putManifest([w.def('done')]);
    await w.catchUp();
    await w.send([{ timestamp: '2026-11-02T10:00:00Z' }, { timestamp: '2026-11-02T11:00:00Z' }]);
    const [first, second] = [await sumWaitingBatches(w.db.kysely, 10), await sumWaitingBatches(w.db.kysely, 10)];
    assert.equal((await runWrite(w.db, 'addSummedBatches', { dialect: 'sqlite', summed: first })).added.length, 1);
    assert.deepEqual(await runWrite(w.db, 'addSummedBatches', { dialect: 'sqlite', summed: second }), {
      added: [],
      left: second[0]?.batches.map((b) => b.id),
      unreadable: [],
    });
    const body = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' });
    assert.deepEqual(body.items[0]?.total, { value: 2, count: 2 });
  });

  it('a recompute whose instance stopped is taken over once its lease expires', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    await w.send(Array.from({ length: 7 }, (_, i) => ({ timestamp: `2026-11-0${i + 1}T10:00:00Z` })));
    await w.catchUp();
    await w.putManifest([w.def('done', { label: 'again' })]);
    const first = new RollupWorker(w.db, { chunk: 2, leaseMs: 60_000 });
    assert.equal(await first.recomputeOnce(), true, 'the first instance does a chunk, then stops');
    const second = new RollupWorker(w.db, { chunk: 2, leaseMs: 60_000 });
    assert.equal(await second.recomputeOnce(), false, 'the lease is held: the second instance does nothing');
    await w.db.kysely
      .updateTable('rollup_state')
      .set({ lease_until: new Date(Date.now() - 1000).toISOString() })
      .where('org_id', '=', w.tenant.orgId)
      .execute();
    await second.catchUp();
    const body = await w.dailyNow({ from: '2026-11-01', to: '2026-11-07' });
    assert.equal(body.items[0]?.status.state, 'current');
    assert.deepEqual(body.items[0]?.total, { value: 7, count: 7 });
  });

  it("SQLite: a chunk is read and summed on the requests' thread and added by the writer; requests are served while it waits", async function () {
    const w = await rollupWorld();
    if (w.db.dialect !== 'sqlite') this.skip();
    await w.putManifest([w.def('done')]);
    await w.send([1, 2, 3].map((h) => ({ timestamp: `2026-11-02T1${h}:00:00Z` })));
    await w.catchUp();
    await w.putManifest([w.def('done', { label: 'again' })]);
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const jobs: string[] = [];
    const writer: Writer<WriteJobTable> = {
      run: async (name, input) => {
        jobs.push(name);
        await held;
        return runWrite(w.db, name, input);
      },
    };
    const worker = new RollupWorker({ ...w.db, writer }, { chunk: 2 });
    const chunk = worker.recomputeOnce();
    await eventually(
      async () => jobs.length,
      (posted) => posted > 0,
    );
    assert.deepEqual(jobs, ['addRecomputedChunk']);
    const during = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' });
    assert.equal(during.items[0]?.status.state, 'recomputing', 'served while the chunk waits for the writer');
    assert.equal((await readState(w.db.kysely, w.tenant.orgId))?.scan_ts, null, 'nothing of the chunk is written yet');
    release();
    assert.equal(await chunk, true);
    assert.equal((await readState(w.db.kysely, w.tenant.orgId))?.scan_ts, '2026-11-02T12:00:00.000Z');
    await worker.catchUp();
    assert.deepEqual(jobs, ['addRecomputedChunk', 'addRecomputedChunk']);
    const body = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' });
    assert.equal(body.items[0]?.status.state, 'current');
    assert.deepEqual(body.items[0]?.total, { value: 3, count: 3 });
  });

  it('sums of a chunk are added only if the recompute is still where, and whose, they were read: each event once', async () => {
    const w = await rollupWorld();
    const orgId = w.tenant.orgId;
    await w.putManifest([w.def('done')]);
    await w.send([1, 2, 3, 4].map((h) => ({ timestamp: `2026-11-02T1${h}:00:00Z` })));
    await w.catchUp();
    await w.putManifest([w.def('done', { label: 'again' })]);
    const now = new Date().toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    assert.equal(await takeLease(w.db.kysely, orgId, 'first', now, until), true);
    const read = () => sumNextChunk(w.db.kysely, w.db.dialect, orgId, { owner: 'first', until }, 2);
    const [once, twice] = [await read(), await read()];
    assert.ok(typeof once === 'object' && typeof twice === 'object');
    assert.equal(await runWrite(w.db, 'addRecomputedChunk', once), true);
    assert.equal(await runWrite(w.db, 'addRecomputedChunk', twice), false, 'the scan moved past where it was read');
    const next = await read();
    assert.ok(typeof next === 'object');
    await w.db.kysely.updateTable('rollup_state').set({ lease_owner: 'second' }).where('org_id', '=', orgId).execute();
    assert.equal(await runWrite(w.db, 'addRecomputedChunk', next), false, 'another instance took the lease over');
    assert.equal(await read(), 'lost');
    await w.db.kysely.updateTable('rollup_state').set({ lease_until: now }).where('org_id', '=', orgId).execute();
    await w.catchUp();
    const body = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02' });
    assert.equal(body.items[0]?.status.state, 'current');
    assert.deepEqual(body.items[0]?.total, { value: 4, count: 4 });
  });
});

/**
 * A world with one statistic `a` (`options` its definition's) whose parts the test adds by hand (`add`: a row's
 * sum is 10 × its count), and `listAll`, a round of the closed days' lists of every organization (other tests'
 * share the database).
 */
async function listsWorld(options: Parameters<Awaited<ReturnType<typeof rollupWorld>>['def']>[1] = {}) {
  const w = await rollupWorld();
  await w.putManifest([w.def('a', options)]);
  await w.catchUp();
  const state = await readState(w.db.kysely, w.tenant.orgId);
  assert.ok(state);
  const a = `${w.tenant.slug}.a`;
  const row = (workerId: string, day: string, count: number) => ({
    statisticId: a,
    workerId,
    day,
    pillar: 'DELIVERY',
    count,
    sum: count * 10,
    numerator: 0,
    denominator: 0,
  });
  const add = (rows: ReturnType<typeof row>[]) =>
    w.db.transaction((trx) => addParts(trx, w.tenant.orgId, state.generation, packCells(rows)));
  const listAll = async () => {
    while (!(await w.services.rollups.listOnce()).settled);
  };
  return { w, state, a, row, add, listAll };
}

describe('Daily rollups: adding parts', () => {
  it('adds to the stored rows whatever their names, sums past the float range included, and to the organization rows summed over workers', async () => {
    const { w, state } = await listsWorld();
    // Names an array or a CSV reader could misread: quotes, backslashes, commas, braces, spaces, the word NULL.
    const statistic = `${w.tenant.slug}.q"uo\\te,{x}`;
    const cell = (workerId: string, pillar: string, count: number, sum: number) => ({
      statisticId: statistic,
      workerId,
      day: '2026-11-02',
      pillar,
      count,
      sum,
      numerator: count / 2,
      denominator: count,
    });
    const cells = [cell('NULL', 'DELIVERY', 1, Infinity), cell('w "1"', 'DELIVERY', 2, 2.5), cell('w "1"', 'QUALITY', 3, -1e300)];
    for (let round = 0; round < 2; round++)
      await w.db.transaction((trx) => addParts(trx, w.tenant.orgId, state.generation, packCells(cells)));
    const stored = async (table: 'rollup_days' | 'rollup_org_days') =>
      (await w.db.kysely.selectFrom(table).selectAll().where('org_id', '=', w.tenant.orgId).where('statistic_id', '=', statistic).execute())
        .map((r) =>
          ['worker_id' in r ? r.worker_id : '-', r.pillar, r.count, r.sum, r.numerator, r.denominator].map((v) =>
            typeof v === 'string' ? v : Number(v),
          ),
        )
        .sort((x, y) => String(x).localeCompare(String(y)));
    assert.deepEqual(await stored('rollup_days'), [
      ['NULL', 'DELIVERY', 2, Infinity, 1, 2],
      ['w "1"', 'DELIVERY', 4, 5, 2, 4],
      ['w "1"', 'QUALITY', 6, -2e300, 3, 6],
    ]);
    assert.deepEqual(await stored('rollup_org_days'), [
      ['-', 'DELIVERY', 6, Infinity, 3, 6],
      ['-', 'QUALITY', 6, -2e300, 3, 6],
    ]);
  });

  it('two drains adding the same organization rows, first met in opposite orders, lock them in one order: no deadlock', async function () {
    // SQLite has one writer at a time; on PostgreSQL both statements run at once.
    if (testDialect !== 'postgres') this.skip();
    const { w, state } = await listsWorld();
    const orgId = w.tenant.orgId;
    const [low, high] = [
      ['P0', 'P1', 'P2'],
      ['P3', 'P4', 'P5'],
    ];
    const cellOf = (workerId: string, pillar: string) => ({
      statisticId: `${w.tenant.slug}.a`,
      workerId,
      day: '2026-11-02',
      pillar,
      count: 1,
      sum: 1,
      numerator: 0,
      denominator: 0,
    });
    // In key order: worker w1's pillars, then w2's. The organization rows are first met as `first` then `second`.
    const cells = (first: string[], second: string[]) =>
      packCells([...first.map((pillar) => cellOf('w1', pillar)), ...second.map((pillar) => cellOf('w2', pillar))]);
    await w.db.transaction((trx) => addParts(trx, orgId, state.generation, cells(low, high)));
    // Straight through kysely: db.transaction would retry the loser of a deadlock and hide it.
    const drain = (packed: PackedCells) => w.db.kysely.transaction().execute((trx) => addParts(trx, orgId, state.generation, packed));
    const waiting = async () => {
      const { rows } = await sql<{ n: string }>`select count(*) as n from pg_stat_activity
        where wait_event_type = 'Lock' and datname = current_database()`.execute(w.db.kysely);
      return Number(rows[0]?.n);
    };
    // A third transaction holds the last row of each half: in the order met, one drain would wait holding low's
    // other rows and the other high's, and each want the other's once it lets go.
    const results = await w.db.kysely.transaction().execute(async (holder) => {
      await holder
        .selectFrom('rollup_org_days')
        .select('pillar')
        .where('org_id', '=', orgId)
        .where('pillar', 'in', ['P2', 'P5'])
        .forUpdate()
        .execute();
      const both = Promise.allSettled([drain(cells(high, low)), drain(cells(low, high))]);
      assert.equal(await eventually(waiting, (n) => n >= 2), 2, 'both drains wait for a lock');
      // Wrapped: a promise returned would be awaited before the holder commits.
      return { both };
    });
    assert.deepEqual(
      (await results.both).map((r) => (r.status === 'rejected' ? String(r.reason) : r.status)),
      ['fulfilled', 'fulfilled'],
    );
    const counts = await w.db.kysely
      .selectFrom('rollup_org_days')
      .select(['pillar', 'count'])
      .where('org_id', '=', orgId)
      .where('generation', '=', state.generation)
      .execute();
    assert.deepEqual(
      counts.map((r) => [r.pillar, Number(r.count)]).sort(),
      [...low, ...high].map((pillar) => [pillar, 3]),
    );
  });
});

describe('Daily rollups: reading', () => {
  it('per worker: workers ranked by the first statistic total, a page at a time, each with every statistic', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('a'), w.def('b', { sourceEventTypes: ['build.finished'], sourceEventCategories: ['CODE_CHANGE'] })]);
    const ts = '2026-11-02T10:00:00Z';
    const many = (externalId: string, n: number, extra: object = {}) =>
      Array.from({ length: n }, () => ({ timestamp: ts, actor: { externalId }, ...extra }));
    await w.send([
      ...many('one', 1),
      ...many('three', 3),
      ...many('two', 2),
      ...many('only-b', 2, { eventType: 'build.finished', category: 'CODE_CHANGE' }),
    ]);
    await w.catchUp();
    const first = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02', groupBy: 'worker', limit: '2' });
    const slug = w.tenant.slug;
    assert.deepEqual(
      first.items.map((s) => [s.worker?.displayName, s.statisticId, s.total.count]),
      [
        ['three', `${slug}.a`, 3],
        ['three', `${slug}.b`, 0],
        ['two', `${slug}.a`, 2],
        ['two', `${slug}.b`, 0],
      ],
    );
    assert.ok(first.nextCursor);
    const second = await w.dailyNow({ from: '2026-11-02', to: '2026-11-02', groupBy: 'worker', limit: '2', cursor: first.nextCursor });
    assert.deepEqual(
      second.items.filter((s) => s.statisticId === `${slug}.a`).map((s) => [s.worker?.displayName, s.total.count]),
      [
        ['one', 1],
        ['only-b', 0],
      ],
    );
    assert.equal(second.nextCursor, null);
    const one = await w.dailyNow({
      from: '2026-11-02',
      to: '2026-11-02',
      workerId: first.items[0]?.worker?.id ?? '',
      statisticId: `${slug}.a`,
    });
    assert.deepEqual(one.items[0]?.total, { value: 3, count: 3 });
  });

  it('per worker: every day of the range for each worker on the page, 0 (null for a ratio) where the worker has none; pillars and fractions add up exactly', async () => {
    const w = await rollupWorld();
    await w.putManifest([
      w.def('points', { aggregation: 'sumField', valueField: 'points' }),
      w.def('ok', { aggregation: 'ratio', valueField: 'ok', format: 'percent' }),
    ]);
    const early = { externalId: 'early' };
    const late = { externalId: 'late' };
    await w.send([
      { timestamp: '2026-11-01T10:00:00Z', actor: early, metadata: { points: 5, ok: true } },
      // One cell in two rows (two pillars) whose sum is not a short decimal: read back to the last bit.
      { timestamp: '2026-11-03T10:00:00Z', actor: late, metadata: { points: 0.1, ok: false } },
      { timestamp: '2026-11-03T11:00:00Z', actor: late, metadata: { points: 0.2 }, pillar: 'REVIEW' },
    ]);
    await w.catchUp();
    const body = await w.dailyNow({ from: '2026-11-01', to: '2026-11-03', groupBy: 'worker' });
    const slug = w.tenant.slug;
    const of = (worker: string, statistic: string) =>
      body.items.find((s) => s.worker?.displayName === worker && s.statisticId === `${slug}.${statistic}`);
    assert.deepEqual(
      body.items.map((s) => [s.worker?.displayName, s.statisticId]),
      [
        ['early', `${slug}.points`],
        ['early', `${slug}.ok`],
        ['late', `${slug}.points`],
        ['late', `${slug}.ok`],
      ],
    );
    assert.deepEqual(dayValues(of('early', 'points')), [
      ['2026-11-01', 5, 1],
      ['2026-11-02', 0, 0],
      ['2026-11-03', 0, 0],
    ]);
    assert.deepEqual(of('early', 'ok')?.days, [
      { day: '2026-11-01', value: 1, count: 1, numerator: 1, denominator: 1 },
      { day: '2026-11-02', value: null, count: 0, numerator: 0, denominator: 0 },
      { day: '2026-11-03', value: null, count: 0, numerator: 0, denominator: 0 },
    ]);
    assert.deepEqual(dayValues(of('late', 'points')), [
      ['2026-11-01', 0, 0],
      ['2026-11-02', 0, 0],
      ['2026-11-03', 0.1 + 0.2, 2],
    ]);
    assert.deepEqual(of('late', 'points')?.total, { value: 0.1 + 0.2, count: 2 });
    assert.deepEqual(of('late', 'ok')?.days[2], { day: '2026-11-03', value: 0, count: 2, numerator: 0, denominator: 1 });
    assert.deepEqual(of('late', 'ok')?.total, { value: 0, count: 2, numerator: 0, denominator: 1 });
  });

  it('per worker: a page reads its own workers only, ranked among every worker with days of any statistic, by the first statistic total', async () => {
    const w = await rollupWorld();
    await w.putManifest([
      w.def('points', { aggregation: 'sumField', valueField: 'points' }),
      w.def('b', { sourceEventTypes: ['build.finished'], sourceEventCategories: ['CODE_CHANGE'] }),
    ]);
    const ts = '2026-11-02T10:00:00Z';
    const build = { eventType: 'build.finished', category: 'CODE_CHANGE' as const };
    await w.send([
      { timestamp: ts, actor: { externalId: 'negative' }, metadata: { points: -3 } },
      { timestamp: ts, actor: { externalId: 'negative' }, ...build },
      { timestamp: ts, actor: { externalId: 'only-b' }, ...build },
      { timestamp: '2026-11-03T10:00:00Z', actor: { externalId: 'only-b' }, ...build },
      { timestamp: ts, actor: { externalId: 'zero' }, metadata: { points: 0 } },
      { timestamp: ts, actor: { externalId: 'positive' }, metadata: { points: 5 } },
    ]);
    await w.catchUp();
    const slug = w.tenant.slug;
    const pages: [string | undefined, string, number, number][][] = [];
    let cursor: string | undefined;
    do {
      const page = await w.dailyNow({ from: '2026-11-01', to: '2026-11-03', groupBy: 'worker', limit: '1', ...(cursor ? { cursor } : {}) });
      pages.push(page.items.map((s) => [s.worker?.displayName, s.statisticId.slice(slug.length + 1), s.total.value ?? NaN, s.total.count]));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    // A worker without days of the first statistic totals 0 with count 0: after a 0 with a count, before a negative total.
    assert.deepEqual(pages, [
      [
        ['positive', 'points', 5, 1],
        ['positive', 'b', 0, 0],
      ],
      [
        ['zero', 'points', 0, 1],
        ['zero', 'b', 0, 0],
      ],
      [
        ['only-b', 'points', 0, 0],
        ['only-b', 'b', 2, 2],
      ],
      [
        ['negative', 'points', -3, 1],
        ['negative', 'b', 1, 1],
      ],
    ]);
  });

  it('reads the days of the workers asked for only, and the parts asked for only', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('a'), w.def('b'), w.def('c')]);
    await w.catchUp();
    const state = await readState(w.db.kysely, w.tenant.orgId);
    assert.ok(state);
    const [a, b, c] = ['a', 'b', 'c'].map((n) => `${w.tenant.slug}.${n}`);
    const row = (statisticId: string, workerId: string, day: string, count: number) => ({
      statisticId,
      workerId,
      day,
      pillar: 'DELIVERY',
      count,
      sum: count * 1.5,
      numerator: count / 4,
      denominator: count * 2,
    });
    await w.db.transaction((trx) =>
      addParts(
        trx,
        w.tenant.orgId,
        state.generation,
        packCells([
          row(a, 'w1', '2026-11-01', 1),
          row(a, 'w2', '2026-11-02', 2),
          row(b, 'w3', '2026-11-02', 3),
          row(c, 'w4', '2026-11-02', 4),
          row(b, 'w5', '2026-11-04', 5),
        ]),
      ),
    );
    const where = { orgId: w.tenant.orgId, generation: state.generation, days: ['2026-11-01', '2026-11-02', '2026-11-03'] };
    const page = await readWorkerDays(w.db.kysely, { ...where, statisticId: a, parts: ['count'], workerIds: ['w2', 'w3'] });
    assert.deepEqual([...page.keys()], ['w2']);
    const w2 = page.get('w2');
    assert.deepEqual([...(w2?.count ?? [])], [0, 2, 0]);
    assert.deepEqual([...(w2?.sum ?? [])], [0, 0, 0], 'a part not asked for stays 0');
    assert.equal((await readWorkerDays(w.db.kysely, { ...where, statisticId: a, parts: ['count'], workerIds: [] })).size, 0);
    const ratio = (await readWorkerDays(w.db.kysely, { ...where, statisticId: b, parts: ['count', 'numerator', 'denominator'] })).get('w3');
    assert.deepEqual(
      [ratio?.count, ratio?.sum, ratio?.numerator, ratio?.denominator].map((part) => [...(part ?? [])]),
      [
        [0, 3, 0],
        [0, 0, 0],
        [0, 0.75, 0],
        [0, 6, 0],
      ],
    );
  });

  it("a read of every worker takes a closed day's list while the day's count is the list's, else the day's rows; lists go with their days", async () => {
    const { w, state, a, row, add, listAll } = await listsWorld({ aggregation: 'sumField', valueField: 'n' });
    await add([row('w1', '2026-11-01', 1), row('w2', '2026-11-01', 2), row('w1', '2026-11-02', 3)]);
    await listAll();
    assert.deepEqual(await unlistedDays(w.db.kysely, '2026-11-20', 10, [w.tenant.orgId]), [], 'a list that holds is not made again');
    // The databases write a double each its own way (10 or 10.0): compared as numbers.
    const lists = async () =>
      (
        await w.db.kysely
          .selectFrom('rollup_day_lists')
          .select(['day', 'parts', 'stamp', 'workers'])
          .where('org_id', '=', w.tenant.orgId)
          .orderBy('day')
          .execute()
      ).map((l) => ({
        ...l,
        workers: l.workers.split(' ').map((t) => (t.startsWith('w') ? t : Number(t))),
      }));
    assert.deepEqual(
      (await lists()).map((l) => [l.day, l.parts, Number(l.stamp), l.workers]),
      [
        ['2026-11-01', 'count,sum', 3, ['w1', 1, 10, 'w2', 2, 20]],
        ['2026-11-02', 'count,sum', 3, ['w1', 3, 30]],
      ],
    );
    // Told apart from the rows it was made of: the read answers what the list says.
    await w.db.kysely.updateTable('rollup_day_lists').set({ workers: 'w9 7 70' }).where('day', '=', '2026-11-01').execute();
    const read = async (parts: ('count' | 'sum')[] = ['count', 'sum'], workerIds?: string[]) => {
      const days = ['2026-11-01', '2026-11-02'];
      const byWorker = await readWorkerDays(w.db.kysely, {
        orgId: w.tenant.orgId,
        generation: state.generation,
        statisticId: a,
        days,
        parts,
        workerIds,
      });
      return Object.fromEntries([...byWorker].map(([id, p]) => [id, [...p.count, ...(parts.includes('sum') ? p.sum : [])]]));
    };
    assert.deepEqual(await read(), { w9: [7, 0, 70, 0], w1: [0, 3, 0, 30] });
    assert.deepEqual(
      await read(['count', 'sum'], ['w9']),
      { w9: [7, 0, 70, 0] },
      'a page of workers takes the list too, for its own workers only',
    );
    assert.deepEqual(await read(['count', 'sum'], ['w1', 'w2']), { w1: [0, 3, 0, 30] });
    assert.deepEqual(await read(['count']), { w1: [1, 3], w2: [2, 0] }, 'a list of other parts is not taken');
    await add([row('w1', '2026-11-01', 1)]);
    assert.deepEqual(await read(), { w1: [2, 3, 20, 30], w2: [2, 0, 20, 0] }, 'a part added since: the rows answer');
    assert.deepEqual(await read(['count', 'sum'], ['w2']), { w2: [2, 0, 20, 0] }, "of a page's workers only");
    await listAll();
    assert.deepEqual(
      (await lists()).map((l) => [l.day, Number(l.stamp), l.workers]),
      [
        ['2026-11-01', 4, ['w1', 2, 20, 'w2', 2, 20]],
        ['2026-11-02', 3, ['w1', 3, 30]],
      ],
    );
    assert.deepEqual(await read(), { w1: [2, 3, 20, 30], w2: [2, 0, 20, 0] });
    await deleteRollupsBefore(w.db.kysely, w.tenant.orgId, '2026-11-02');
    assert.deepEqual(
      (await lists()).map((l) => l.day),
      ['2026-11-02'],
    );
  });

  it('a read of every worker keeps the lists it read, by tag, and reads a day again only when its tag no longer holds', async () => {
    const { w, state, a, row, add, listAll } = await listsWorld();
    await add([
      row('w1', '2026-11-01', 1),
      row('w2', '2026-11-01', 2),
      row('w1', '2026-11-02', 3),
      row('w2', '2026-11-02', 4),
      row('w1', '2026-11-03', 5),
    ]);
    await listAll();
    const cache = new DayListCache();
    const read = async (days = ['2026-11-01', '2026-11-02', '2026-11-03']) => {
      const byWorker = await readWorkerDays(
        w.db.kysely,
        { orgId: w.tenant.orgId, generation: state.generation, statisticId: a, days, parts: ['count'] },
        cache,
      );
      return Object.fromEntries([...byWorker].map(([id, p]) => [id, [...p.count]]));
    };
    assert.deepEqual(await read(), { w1: [1, 3, 5], w2: [2, 4, 0] });
    assert.equal(cache.lists, 3);
    const editList = (day: string, set: { workers: string; tag?: string }) =>
      w.db.kysely.updateTable('rollup_day_lists').set(set).where('org_id', '=', w.tenant.orgId).where('day', '=', day).execute();
    // Told apart from the database's list: under the same tag the read answers what it kept.
    await editList('2026-11-01', { workers: 'w9 7' });
    assert.deepEqual(await read(), { w1: [1, 3, 5], w2: [2, 4, 0] });
    // A new tag is a new list: read and kept in place of the old.
    await editList('2026-11-01', { workers: 'w9 7', tag: 'edited' });
    assert.deepEqual(await read(), { w9: [7, 0, 0], w1: [0, 3, 5], w2: [0, 4, 0] });
    assert.equal(cache.lists, 3);
    // A part added since the list was made: the day's rows answer, whatever is kept.
    await add([row('w2', '2026-11-02', 1)]);
    assert.deepEqual(await read(), { w9: [7, 0, 0], w1: [0, 3, 5], w2: [0, 5, 0] });
    // Listed again, under a new tag: read once more, and kept.
    await listAll();
    assert.deepEqual(await read(), { w9: [7, 0, 0], w1: [0, 3, 5], w2: [0, 5, 0] });
    await editList('2026-11-02', { workers: 'w8 1' });
    assert.deepEqual(await read(['2026-11-02']), { w1: [3], w2: [5] });
    // Days gone with their lists: a kept list of them answers nothing.
    await deleteRollupsBefore(w.db.kysely, w.tenant.orgId, '2026-11-03');
    assert.deepEqual(await read(), { w1: [0, 0, 5] });
  });

  it('refuses a bad range, an unknown statistic and another organization worker', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('a')]);
    const cases: [string, number, string][] = [
      ['from=2026-11-02&to=2026-11-01', 400, 'to'],
      ['from=2026-01-01&to=2027-01-02', 400, 'to'],
      ['from=2026-11-01', 400, 'to'],
      [`from=2026-11-01&to=2026-11-02&statisticId=${w.tenant.slug}.nope`, 400, 'statisticId'],
      ['from=2026-11-01&to=2026-11-02&workerId=wkr_000000000AAAAAAAAAAAA', 404, 'worker'],
    ];
    for (const [query, status, names] of cases) {
      const res = await w.api.get(`${DAILY}?${query}`);
      assert.equal(res.status, status, `${query}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.error.message, new RegExp(names));
    }
    assert.equal((await w.api.get(`${DAILY}?from=2026-01-01&to=2026-12-31`)).status, 200, '366 days are allowed');
    const last = await w.api.get(`${DAILY}?from=9999-12-30&to=9999-12-31`);
    assert.deepEqual(
      last.body.items[0].days.map((d: { day: string }) => d.day),
      ['9999-12-30', '9999-12-31'],
      'the last days there are',
    );
    const early = await w.api.get('/api/v1/console/reports/summary?from=0000-01-01&to=0000-01-02');
    assert.equal(early.status, 400, 'a summary whose previous range would start before 0000-01-01');
    assert.match(early.body.error.message, /from/);
  });

  it('summary: per pillar against the previous range, the event pillar overriding, default-disabled hidden unless asked, dimensions', async () => {
    const w = await rollupWorld();
    const slug = w.tenant.slug;
    await w.putManifest([
      w.def('done', { pillar: 'DELIVERY', feedsDimensions: ['performance', 'activity'] }),
      w.def('hidden', { pillar: 'ACTIVITY', defaultEnabled: false, feedsDimensions: ['activity'] }),
    ]);
    await w.send([
      { timestamp: '2026-11-08T10:00:00Z' },
      { timestamp: '2026-11-09T10:00:00Z' },
      { timestamp: '2026-11-09T11:00:00Z', pillar: 'REVIEW' },
      { timestamp: '2026-11-05T10:00:00Z' },
      { timestamp: '2026-11-09T12:00:00Z', actor: { externalId: 'other' } },
    ]);
    const body = await w.summary({ from: '2026-11-08', to: '2026-11-10' });
    assert.deepEqual(body.previous, { from: '2026-11-05', to: '2026-11-07' });
    assert.deepEqual(
      body.pillars.map((p) => [p.pillar, p.statistics.map((s) => [s.statisticId, s.total.count, s.previousTotal.count])]),
      [
        ['DELIVERY', [[`${slug}.done`, 3, 1]]],
        ['REVIEW', [[`${slug}.done`, 1, 0]]],
      ],
    );
    const other = await w.db.kysely
      .selectFrom('worker_external_ids')
      .select('worker_id')
      .where('external_id', '=', 'other')
      .executeTakeFirstOrThrow();
    const ofOne = await w.summary({ from: '2026-11-08', to: '2026-11-10', workerId: other.worker_id });
    assert.deepEqual(
      ofOne.pillars.map((p) => [p.pillar, p.statistics.map((s) => [s.statisticId, s.total.count, s.previousTotal.count])]),
      [['DELIVERY', [[`${slug}.done`, 1, 0]]]],
      "one worker's summary counts only their events",
    );
    assert.deepEqual(body.dimensions, [
      { dimension: 'performance', statisticIds: [`${slug}.done`] },
      { dimension: 'activity', statisticIds: [`${slug}.done`] },
    ]);
    const asked = await w.summary({ from: '2026-11-08', to: '2026-11-10', statisticId: `${slug}.hidden` });
    assert.deepEqual(
      asked.pillars.map((p) => [p.pillar, p.statistics.map((s) => [s.statisticId, s.total.count])]),
      [
        ['ACTIVITY', [[`${slug}.hidden`, 3]]],
        ['REVIEW', [[`${slug}.hidden`, 1]]],
      ],
    );
  });
});

describe('ingestctl rollups verify', () => {
  async function verify(env: Record<string, string>, orgId: string) {
    let out = '';
    let err = '';
    const code = await runIngestctl(['rollups', 'verify', '--org', orgId], { env, out: (t) => (out += t), err: (t) => (err += t) });
    return { code, out, err };
  }

  it('finds no difference in rollups that are caught up, or with batches still waiting; prints each difference and exits non-zero', async () => {
    const w = await rollupWorld();
    const env = { DATABASE_URL: databaseUrlOf(w.config.database) };
    await w.putManifest([w.def('a'), w.def('r', { aggregation: 'ratio', valueField: 'ok' })]);
    await w.send([
      { timestamp: '2026-11-02T10:00:00Z', metadata: { ok: true } },
      { timestamp: '2026-11-03T10:00:00Z', pillar: 'REVIEW' },
    ]);
    await w.catchUp();
    await w.send([{ timestamp: '2026-11-04T10:00:00Z' }]);
    const clean = await verify(env, w.tenant.orgId);
    assert.equal(clean.code, 0, clean.err);
    assert.match(clean.out, /differences: 0/);

    await w.catchUp();
    await w.db.kysely
      .updateTable('rollup_days')
      .set({ count: 5 })
      .where('org_id', '=', w.tenant.orgId)
      .where('day', '=', '2026-11-03')
      .execute();
    const tampered = await verify(env, w.tenant.orgId);
    assert.notEqual(tampered.code, 0);
    assert.match(tampered.err, new RegExp(`${w.tenant.slug}\\.a 2026-11-03 wkr_\\S+ REVIEW: expected count 1 .* stored count 5`));
  });
});

describe('Daily rollups: changes made through the console', () => {
  it("the organization PATCH of the time zone and the console's manifest PUT both recompute", async () => {
    const w = await rollupWorld();
    const { console: owner } = await signIn(w.app, w.db, { orgId: w.tenant.orgId, role: 'owner' });
    await w.putManifest([w.def('done')]);
    await w.send([{ timestamp: '2026-11-10T23:30:00Z' }]);
    await w.catchUp();
    assert.equal((await owner.patch('/api/v1/console/organization', { body: { timeZone: 'Asia/Kathmandu' } })).status, 200);
    const zoned = await w.daily({ from: '2026-11-10', to: '2026-11-11' });
    // Stored in its canonical spelling.
    assert.equal(zoned.timeZone, new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Kathmandu' }).resolvedOptions().timeZone);
    assert.deepEqual(
      dayValues(zoned.items[0]).map(([, v]) => v),
      [0, 1],
    );

    const put = await owner.put(`/api/v1/console/apps/${w.tenant.appId}/statistics`, {
      body: { statistics: [w.def('done', { aggregation: 'durationMinutes' })] },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal((await w.dailyNow({ from: '2026-11-10', to: '2026-11-11' })).items[0]?.status.state, 'recomputing');
    const after = await w.daily({ from: '2026-11-10', to: '2026-11-11' });
    assert.deepEqual(after.items[0]?.total, { value: 0, count: 1 });
  });
});

describe('Daily rollups and retention', () => {
  it('outlive the events EVENT_RETENTION_DAYS sweeps, go themselves after ROLLUP_RETENTION_DAYS, and verify compares only the days left whole', async () => {
    const w = await rollupWorld();
    await w.putManifest([w.def('done')]);
    const now = new Date('2026-11-20T12:00:00Z');
    await w.send([
      { timestamp: '2026-07-01T10:00:00Z' }, // older than both retention periods
      { timestamp: '2026-09-01T10:00:00Z' }, // older than the events' 60 days, within the rollups' 120
      { timestamp: '2026-11-10T10:00:00Z' },
    ]);
    await w.catchUp();
    const counts = async () =>
      dayValues((await w.daily({ from: '2026-07-01', to: '2026-11-10' })).items[0]).filter(([, , count]) => count > 0);
    assert.deepEqual(await counts(), [
      ['2026-07-01', 1, 1],
      ['2026-09-01', 1, 1],
      ['2026-11-10', 1, 1],
    ]);

    const retention = { events: 60, rollups: 120 };
    await new RetentionSweeper(w.db, retention, silentLogger, { restFactor: 0 }).sweep(now);
    const left = await w.db.kysely.selectFrom('events').select('ts').where('org_id', '=', w.tenant.orgId).orderBy('ts').execute();
    assert.deepEqual(
      left.map((e) => e.ts),
      ['2026-11-10T10:00:00.000Z'],
      'the expired events are gone',
    );
    assert.deepEqual(
      await counts(),
      [
        ['2026-09-01', 1, 1],
        ['2026-11-10', 1, 1],
      ],
      "the rollups keep September's day, and drop July's",
    );

    assert.deepEqual((await verifyRollups(w.db, w.tenant.orgId, firstWholeDay(retention, now))).differences, []);
    const everyDay = await verifyRollups(w.db, w.tenant.orgId);
    assert.equal(everyDay.differences.length, 1, 'compared over every day, September has no events left');
    assert.match(everyDay.differences[0] as string, / 2026-09-01 .*expected nothing, stored count 1/);
  });
});

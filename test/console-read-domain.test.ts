import assert from 'node:assert/strict';
import { setTimeZone } from '../src/data/organizations';
import { snapshotHistory, timeline, timelineDay, timelineExport, worker, workers, type ReadContext } from '../src/domain/console-read';
import { CursorCodec } from '../src/domain/cursor';
import { dayRange, daysSpanned, localDate, today } from '../src/domain/local-day';
import { csvCell, csvHeader, exportRecord } from '../src/domain/timeline-export';
import { ApiError } from '../src/errors';
import { ingest, ingestSnapshot } from './support/console-data';
import { createTenant, setup } from './support/fixtures';

async function rejects(work: Promise<unknown>, parameter: string): Promise<void> {
  await assert.rejects(work, (err: unknown) => {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.code, 'invalid_query');
    assert.match(err.message, new RegExp(`^${parameter}\\b`));
    return true;
  });
}

describe('Calendar days in a time zone (local-day)', () => {
  it('gives 24-hour days in UTC and 23- and 25-hour days across daylight-saving changes', () => {
    assert.deepEqual(dayRange('2026-06-01', 'UTC'), { from: '2026-06-01T00:00:00.000Z', to: '2026-06-02T00:00:00.000Z' });
    assert.deepEqual(dayRange('2026-03-29', 'Europe/Berlin'), { from: '2026-03-28T23:00:00.000Z', to: '2026-03-29T22:00:00.000Z' });
    assert.deepEqual(dayRange('2026-10-25', 'Europe/Berlin'), { from: '2026-10-24T22:00:00.000Z', to: '2026-10-25T23:00:00.000Z' });
    assert.deepEqual(dayRange('2026-03-08', 'America/Los_Angeles'), { from: '2026-03-08T08:00:00.000Z', to: '2026-03-09T07:00:00.000Z' });
    assert.deepEqual(dayRange('2026-11-01', 'America/Los_Angeles'), { from: '2026-11-01T07:00:00.000Z', to: '2026-11-02T08:00:00.000Z' });
  });

  it('starts a day whose midnight the clocks skip at the first local time that exists', () => {
    // America/Santiago moved from 00:00 to 01:00 on 2026-09-06: the day starts at 01:00 local (04:00Z).
    assert.equal(dayRange('2026-09-06', 'America/Santiago').from, '2026-09-06T04:00:00.000Z');
  });

  it('writes a local date as an ISO date: four-digit years, year 0 without an era, the expanded form beyond 0000 to 9999', () => {
    assert.equal(localDate(Date.parse('0999-05-01T12:00:00Z'), 'UTC'), '0999-05-01');
    assert.equal(localDate(Date.parse('0000-01-01T12:00:00Z'), 'UTC'), '0000-01-01');
    assert.equal(localDate(Date.parse('0000-01-01T00:00:00Z'), 'America/Los_Angeles'), '-000001-12-31');
    assert.equal(localDate(Date.parse('9999-12-31T23:00:00Z'), 'Pacific/Kiritimati'), '+010000-01-01');
  });

  it('starts a day of local mean time at the second its offset gives', () => {
    // Los Angeles kept -7:52:58 until 1883: its days started at 07:52:58Z.
    assert.deepEqual(dayRange('1880-01-01', 'America/Los_Angeles'), { from: '1880-01-01T07:52:58.000Z', to: '1880-01-02T07:52:58.000Z' });
    assert.equal(localDate(Date.parse('1880-01-01T07:52:57.999Z'), 'America/Los_Angeles'), '1879-12-31');
    assert.equal(localDate(Date.parse('1880-01-01T07:52:58.000Z'), 'America/Los_Angeles'), '1880-01-01');
  });

  it("knows today's date in the zone", () => {
    const now = new Date('2026-11-22T23:30:00Z');
    assert.equal(today('UTC', now), '2026-11-22');
    assert.equal(today('Europe/Berlin', now), '2026-11-23');
    assert.equal(today('America/Los_Angeles', now), '2026-11-22');
  });
});

describe('The days an instant range spans in a time zone (daysSpanned)', () => {
  // An instant's day, as PostgreSQL looks it up in the list (width_bucket): the last day starting at or before it.
  const dayIn = (days: { day: string; start: string }[], ts: string) => days.filter((d) => d.start <= ts).at(-1)?.day;

  for (const [zone, from, through] of [
    ['Europe/Berlin', '2026-03-27T20:00:00.000Z', '2026-04-01T03:00:00.000Z'],
    ['America/Los_Angeles', '2026-10-30T00:00:00.000Z', '2026-11-03T12:00:00.000Z'],
    ['Asia/Kathmandu', '2026-05-01T17:00:00.000Z', '2026-05-04T19:00:00.000Z'],
    ['Pacific/Chatham', '2026-04-03T10:00:00.000Z', '2026-04-07T10:00:00.000Z'],
    ['Pacific/Apia', '2011-12-28T00:00:00.000Z', '2012-01-02T00:00:00.000Z'],
    ['Pacific/Kiritimati', '9999-12-29T00:00:00.000Z', '9999-12-31T23:59:00.000Z'],
    ['America/Los_Angeles', '0000-01-01T00:00:00.000Z', '0000-01-03T00:00:00.000Z'],
  ] as const) {
    it(`puts every minute from ${from} to ${through} on its local day in ${zone}`, () => {
      const days = daysSpanned(from, through, zone);
      assert.equal(days[0]?.day, localDate(Date.parse(from), zone));
      for (let ms = Date.parse(from); ms <= Date.parse(through); ms += 60_000) {
        const ts = new Date(ms).toISOString();
        assert.equal(dayIn(days, ts), localDate(ms, zone), ts);
      }
    });
  }

  it('lists a day the zone skipped (Samoa, 2011-12-30) with the start of the next: no instant is on it', () => {
    const days = daysSpanned('2011-12-29T00:00:00.000Z', '2011-12-31T00:00:00.000Z', 'Pacific/Apia');
    assert.deepEqual(
      days.map((d) => d.day),
      ['2011-12-28', '2011-12-29', '2011-12-30', '2011-12-31'],
    );
    assert.equal(days[2]?.start, days[3]?.start);
  });
});

describe('Signed cursors (CursorCodec)', () => {
  const codec = new CursorCodec(async () => Buffer.from('0123456789abcdef0123456789abcdef'));
  const scope = { orgId: 'org_a', list: 'timeline', filters: { kind: 'event', appId: undefined } };

  it('reads back the position it issued for the same organization, list and filters', async () => {
    const cursor = await codec.issue(scope, ['2026-11-20T10:00:00.000Z', 'evt_x']);
    assert.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.deepEqual(await codec.read({ ...scope, filters: { kind: 'event' } }, cursor, 2), ['2026-11-20T10:00:00.000Z', 'evt_x']);
  });

  it('refuses a forged, tampered, foreign or re-filtered cursor with invalid_query naming cursor', async () => {
    const cursor = await codec.issue(scope, ['2026-11-20T10:00:00.000Z', 'evt_x']);
    const [payload, signature] = cursor.split('.') as [string, string];
    const forgedPayload = Buffer.from(JSON.stringify(['2030-01-01T00:00:00.000Z', 'evt_x'])).toString('base64url');
    await rejects(codec.read(scope, `${forgedPayload}.${signature}`, 2), 'cursor');
    await rejects(codec.read(scope, `${payload}.${signature.slice(1)}A`, 2), 'cursor');
    await rejects(codec.read(scope, `${payload}.`, 2), 'cursor');
    await rejects(codec.read(scope, 'garbage', 2), 'cursor');
    await rejects(codec.read({ ...scope, orgId: 'org_b' }, cursor, 2), 'cursor');
    await rejects(codec.read({ ...scope, filters: { kind: 'snapshot' } }, cursor, 2), 'cursor');
    await rejects(codec.read({ ...scope, list: 'workers' }, cursor, 2), 'cursor');
    const otherSecret = new CursorCodec(async () => Buffer.from('another secret, another service!'));
    await rejects(otherSecret.read(scope, cursor, 2), 'cursor');
  });
});

describe('Console reads (domain)', () => {
  async function tenantWithApp() {
    const s = await setup();
    const ctx: ReadContext = s.services.read;
    return { ...s, ctx };
  }

  describe('timeline', () => {
    it('lists rows newest first (timestamp then id), with filters and from inclusive, to exclusive', async () => {
      const { app, tenant, ctx } = await tenantWithApp();
      const [a, b, c] = await ingest(app, tenant.key, [
        {
          timestamp: '2026-11-20T10:00:00Z',
          actor: { externalId: 'w-1', displayName: 'Ann' },
          duration: 30,
          pillar: 'DELIVERY',
          metadata: { k: 1 },
        },
        { timestamp: '2026-11-20T11:00:00Z', actor: { externalId: 'w-2' }, eventType: 'build.finished', category: 'CODE_CHANGE' },
        { timestamp: '2026-11-20T12:00:00Z', actor: { externalId: 'w-1' } },
      ]);
      const all = await timeline(ctx, tenant.orgId, {});
      assert.deepEqual(
        all.items.map((r) => r.id),
        [c, b, a],
      );
      assert.equal(all.nextCursor, null);
      const first = all.items[2];
      assert.deepEqual(first, {
        id: a,
        kind: 'event',
        integrationId: `custom:${tenant.slug}`,
        app: { id: tenant.appId, slug: tenant.slug, name: first?.app.name },
        worker: { id: first?.worker.id, displayName: 'Ann' },
        eventType: 'ticket.resolved',
        category: 'TASK_UPDATE',
        timestamp: '2026-11-20T10:00:00.000Z',
        receivedAt: first?.receivedAt,
        duration: 30,
        pillar: 'DELIVERY',
        metadata: { k: 1 },
        requestId: first?.requestId,
      });
      const ids = async (q: Parameters<typeof timeline>[2]) => (await timeline(ctx, tenant.orgId, q)).items.map((r) => r.id);
      assert.deepEqual(await ids({ from: '2026-11-20T11:00:00Z' }), [c, b], 'from is inclusive');
      assert.deepEqual(await ids({ to: '2026-11-20T13:00:00+02:00' }), [a], 'to is exclusive, offsets honoured');
      assert.deepEqual(await ids({ eventType: 'build.finished' }), [b]);
      assert.deepEqual(await ids({ category: 'TASK_UPDATE' }), [c, a]);
      assert.deepEqual(await ids({ workerId: first?.worker.id }), [c, a]);
      assert.deepEqual(await ids({ appId: tenant.appId, kind: 'event' }), [c, b, a]);
      assert.deepEqual(await ids({ kind: 'snapshot' }), []);
      assert.deepEqual(await ids({ from: '2026-11-20T12:00:00Z', to: '2026-11-20T12:00:00Z' }), [], 'an empty range is no error');
    });

    it('refuses from after to and dates beyond the representable years, naming the parameter', async () => {
      const { tenant, ctx } = await tenantWithApp();
      await rejects(timeline(ctx, tenant.orgId, { from: '2026-11-21T00:00:00Z', to: '2026-11-20T00:00:00Z' }), 'from');
      await rejects(timeline(ctx, tenant.orgId, { to: '0000-01-01T00:00:00+01:00' }), 'to');
    });

    it('pages without repeating or skipping rows while rows arrive, those with the same timestamp included', async () => {
      const { app, tenant, ctx } = await tenantWithApp();
      const same = '2026-11-20T10:00:00.000Z';
      const before = await ingest(app, tenant.key, [
        ...Array.from({ length: 5 }, () => ({ timestamp: same })),
        { timestamp: '2026-11-20T09:00:00Z' },
        { timestamp: '2026-11-20T11:00:00Z' },
      ]);
      const seen: string[] = [];
      let page = await timeline(ctx, tenant.orgId, { limit: 3 });
      const arrived: string[] = [];
      for (let round = 0; ; round++) {
        seen.push(...page.items.map((r) => r.id));
        if (!page.nextCursor) break;
        // Between pages: a newer row, a row at the shared timestamp, and an older one.
        arrived.push(
          ...(await ingest(app, tenant.key, [
            { timestamp: '2026-11-20T12:00:00Z' },
            { timestamp: same },
            { timestamp: `2026-11-20T08:0${round}:00Z` },
          ])),
        );
        page = await timeline(ctx, tenant.orgId, { limit: 3, cursor: page.nextCursor });
      }
      assert.equal(new Set(seen).size, seen.length, 'no row twice');
      for (const id of before) assert.ok(seen.includes(id), `row ${id} present at the start was not skipped`);
      const older = (await timeline(ctx, tenant.orgId, { to: '2026-11-20T08:59:00Z', limit: 200 })).items.map((r) => r.id);
      for (const id of older) assert.ok(seen.includes(id), 'rows older than the cursor that arrived while paging show up on later pages');
      const stored = (await timeline(ctx, tenant.orgId, { limit: 200 })).items;
      for (let i = 1; i < seen.length; i++) {
        const [prev, cur] = [stored.findIndex((r) => r.id === seen[i - 1]), stored.findIndex((r) => r.id === seen[i])];
        assert.ok(prev < cur, 'pages follow the order of the whole list');
      }
    });

    it("binds a cursor to its organization and filters, and shows nothing of another organization's ids", async () => {
      const { app, db, tenant, ctx } = await tenantWithApp();
      await ingest(app, tenant.key, [{ timestamp: '2026-11-20T10:00:00Z' }, { timestamp: '2026-11-20T11:00:00Z' }]);
      const page = await timeline(ctx, tenant.orgId, { limit: 1, kind: 'event' });
      assert.ok(page.nextCursor);
      const other = await createTenant(db);
      await rejects(timeline(ctx, other.orgId, { limit: 1, kind: 'event', cursor: page.nextCursor }), 'cursor');
      await rejects(timeline(ctx, tenant.orgId, { limit: 1, cursor: page.nextCursor }), 'cursor');
      assert.equal(
        (await timeline(ctx, tenant.orgId, { limit: 5, kind: 'event', cursor: page.nextCursor })).items.length,
        1,
        'limit may change',
      );
      const workerId = page.items[0]?.worker.id;
      assert.deepEqual((await timeline(ctx, other.orgId, { workerId })).items, []);
      assert.deepEqual((await timeline(ctx, other.orgId, { appId: tenant.appId })).items, []);
    });

    it('shows snapshots as rows with their metrics in the order sent, in the strip form', async () => {
      const { app, tenant, ctx } = await tenantWithApp();
      await ingestSnapshot(app, tenant.key, {
        snapshotType: 'load.now',
        timestamp: '2026-11-20T10:00:00Z',
        metrics: { z: 1, a: 'x', m: { value: 2, unit: 'count', label: 'M' } },
        metadata: { src: 't' },
      });
      const [row] = (await timeline(ctx, tenant.orgId, { kind: 'snapshot' })).items;
      assert.equal(row?.snapshotType, 'load.now');
      assert.equal(row?.eventType, undefined);
      assert.deepEqual(row?.metrics, [
        { id: 'z', value: 1 },
        { id: 'a', value: 'x' },
        { id: 'm', value: 2, unit: 'count', label: 'M' },
      ]);
      assert.deepEqual(row?.metadata, { src: 't' });
    });
  });

  describe('timeline of a day grouped per worker', () => {
    it("groups the organization's day in its time zone, a 25-hour DST day in Europe/Berlin", async () => {
      const { app, db, tenant, ctx } = await tenantWithApp();
      await setTimeZone(db.kysely, tenant.orgId, 'Europe/Berlin');
      // 2026-10-25 in Berlin: 2026-10-24T22:00Z to 2026-10-25T23:00Z.
      await ingest(app, tenant.key, [
        { timestamp: '2026-10-24T21:59:59Z', actor: { externalId: 'a', displayName: 'Ann' } }, // the day before
        { timestamp: '2026-10-24T22:00:00Z', actor: { externalId: 'a' } },
        ...Array.from({ length: 6 }, (_, i) => ({ timestamp: `2026-10-25T0${i}:00:00Z`, actor: { externalId: 'a' } })),
        { timestamp: '2026-10-25T22:59:59Z', actor: { externalId: 'b', displayName: 'Bob' } }, // the 25th hour
        { timestamp: '2026-10-25T23:00:00Z', actor: { externalId: 'b' } }, // the next day
      ]);
      const day = await timelineDay(ctx, tenant.orgId, { day: '2026-10-25' });
      assert.equal(day.timeZone, 'Europe/Berlin');
      assert.equal(day.day, '2026-10-25');
      assert.deepEqual(
        day.items.map((g) => [g.worker.displayName, g.count, g.latestAt, g.rows.length]),
        [
          ['Bob', 1, '2026-10-25T22:59:59.000Z', 1],
          ['Ann', 7, '2026-10-25T05:00:00.000Z', 5],
        ],
      );
      assert.deepEqual(
        day.items[1]?.rows.map((r) => r.timestamp),
        [
          '2026-10-25T05:00:00.000Z',
          '2026-10-25T04:00:00.000Z',
          '2026-10-25T03:00:00.000Z',
          '2026-10-25T02:00:00.000Z',
          '2026-10-25T01:00:00.000Z',
        ],
      );
      const paged = await timelineDay(ctx, tenant.orgId, { day: '2026-10-25', limit: 1 });
      assert.deepEqual(
        paged.items.map((g) => g.worker.displayName),
        ['Bob'],
      );
      const next = await timelineDay(ctx, tenant.orgId, { day: '2026-10-25', limit: 1, cursor: paged.nextCursor as string });
      assert.deepEqual(
        next.items.map((g) => g.worker.displayName),
        ['Ann'],
      );
      assert.equal(next.nextCursor, null);
      await rejects(timelineDay(ctx, tenant.orgId, { day: '2026-10-24', limit: 1, cursor: paged.nextCursor as string }), 'cursor');
    });

    it('pages every worker of the day once, most recently active first, whether the newest rows or every worker had to be read', async () => {
      const { app, tenant, ctx } = await tenantWithApp();
      const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 0, minute)).toISOString();
      // Twenty workers early in the day, several sharing a latest timestamp (ties go by worker id, descending).
      const early = Array.from({ length: 20 }, (_, w) =>
        Array.from({ length: 1 + (w % 3) }, (_, n) => ({ timestamp: at(60 + (w % 7) * 10 - n), actor: { externalId: `early-${w}` } })),
      ).flat();
      await ingest(app, tenant.key, early);
      const groupsOf = async (limit: number) => {
        const seen: [string, number, string][] = [];
        let cursor: string | undefined;
        do {
          const page = await timelineDay(ctx, tenant.orgId, { day: '2026-11-20', limit, ...(cursor ? { cursor } : {}) });
          seen.push(...page.items.map((g): [string, number, string] => [g.worker.id, g.count, g.latestAt]));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        return seen;
      };
      // The oracle: each worker's count and latest row, ordered by (latest, worker id) descending.
      const oracle = async () => {
        const rows = [];
        for await (const page of timelineExport(ctx, tenant.orgId, { from: at(0), to: at(24 * 60) })) rows.push(...page);
        const byWorker = new Map<string, { count: number; latest: string }>();
        for (const row of rows) {
          const group = byWorker.get(row.worker.id) ?? { count: 0, latest: '' };
          byWorker.set(row.worker.id, { count: group.count + 1, latest: row.timestamp > group.latest ? row.timestamp : group.latest });
        }
        return [...byWorker]
          .map(([id, g]): [string, number, string] => [id, g.count, g.latest])
          .sort((a, b) => (a[2] !== b[2] ? (a[2] < b[2] ? 1 : -1) : a[0] < b[0] ? 1 : -1));
      };
      assert.deepEqual(await groupsOf(3), await oracle());
      // A hundred workers and two busy ones share one latest instant, the busy ones' 500 rows read first
      // (newer ids): a page is known only once the walk is past that instant.
      // (The busy pair is created first: worker ids grow with time, so a crowd worker comes first on that instant.)
      await ingest(
        app,
        tenant.key,
        [0, 1].map((n) => ({ timestamp: at(1), actor: { externalId: `pair-${n}` } })),
      );
      await ingest(
        app,
        tenant.key,
        Array.from({ length: 100 }, (_, n) => ({ timestamp: at(500), actor: { externalId: `crowd-${n}` } })),
      );
      await ingest(
        app,
        tenant.key,
        Array.from({ length: 500 }, (_, n) => ({ timestamp: at(500), actor: { externalId: `pair-${n % 2}` } })),
      );
      assert.deepEqual(await groupsOf(1), await oracle());
      // One worker then sends more rows late in the day than the walk over the newest rows reads.
      for (let batch = 0; batch < 12; batch++) {
        await ingest(
          app,
          tenant.key,
          Array.from({ length: 500 }, (_, n) => ({ timestamp: at(600 + batch), actor: { externalId: `busy-${n % 2}` } })),
        );
      }
      const expected = await oracle();
      assert.equal(expected.length, 124);
      assert.deepEqual(await groupsOf(3), expected);
      assert.deepEqual(await groupsOf(50), expected);
    });

    it('uses America/Los_Angeles days, the 23-hour spring-forward day included, and today there by default', async () => {
      const { app, db, tenant, ctx } = await tenantWithApp();
      await setTimeZone(db.kysely, tenant.orgId, 'America/Los_Angeles');
      // 2026-03-08 in Los Angeles: 08:00Z to 07:00Z next day (23 hours).
      await ingest(app, tenant.key, [
        { timestamp: '2026-03-08T07:59:59Z', actor: { externalId: 'a' } },
        { timestamp: '2026-03-08T08:00:00Z', actor: { externalId: 'a' } },
        { timestamp: '2026-03-09T06:59:59Z', actor: { externalId: 'b' } },
        { timestamp: '2026-03-09T07:00:00Z', actor: { externalId: 'c' } },
      ]);
      const day = await timelineDay(ctx, tenant.orgId, { day: '2026-03-08' });
      assert.deepEqual(
        day.items.map((g) => [g.worker.displayName, g.count]),
        [
          ['b', 1],
          ['a', 1],
        ],
      );
      const now = await timelineDay(ctx, tenant.orgId, {});
      assert.equal(now.day, today('America/Los_Angeles'));
      assert.deepEqual(now.items, []);
    });
  });

  describe('workers', () => {
    it('finds workers by a case-insensitive prefix of name, email or externalId, ordered by name then id', async () => {
      const { app, tenant, ctx } = await tenantWithApp();
      await ingest(app, tenant.key, [
        { actor: { externalId: 'EXT-Zed', displayName: 'zed Quinn' } },
        { actor: { externalId: 'x-2', displayName: 'Anna Smith', email: 'Anna.S@Example.com' } },
        { actor: { externalId: 'x-3', displayName: 'Bert' } },
      ]);
      const names = async (q?: string) => (await workers(ctx, tenant.orgId, { q })).items.map((w) => w.displayName);
      assert.deepEqual(await names(), ['Anna Smith', 'Bert', 'zed Quinn']);
      assert.deepEqual(await names('ANN'), ['Anna Smith']);
      assert.deepEqual(await names('anna.s@'), ['Anna Smith']);
      assert.deepEqual(await names('ext-z'), ['zed Quinn']);
      assert.deepEqual(await names('x-'), ['Anna Smith', 'Bert']);
      assert.deepEqual(await names('smith'), [], 'a prefix, not a substring');
      const [anna] = (await workers(ctx, tenant.orgId, { q: 'anna' })).items;
      assert.equal(anna?.email, 'Anna.S@Example.com');
      assert.ok(anna?.lastActivityAt);
      const first = await workers(ctx, tenant.orgId, { limit: 2 });
      const rest = await workers(ctx, tenant.orgId, { limit: 2, cursor: first.nextCursor as string });
      assert.deepEqual(
        [...first.items, ...rest.items].map((w) => w.displayName),
        ['Anna Smith', 'Bert', 'zed Quinn'],
      );
      await rejects(workers(ctx, tenant.orgId, { limit: 2, q: 'a', cursor: first.nextCursor as string }), 'cursor');
    });

    it("shows a worker with externalIds, connections and the strip; another organization's worker is not found", async () => {
      const { app, db, tenant, ctx } = await tenantWithApp();
      const workerId = await ingestSnapshot(app, tenant.key, {
        actor: { externalId: 'dana-1', displayName: 'Dana', email: 'dana@example.com' },
        snapshotType: 'load.old',
        timestamp: '2026-11-19T00:00:00Z',
        metrics: { old: 1 },
      });
      await ingestSnapshot(app, tenant.key, {
        actor: { workerId },
        snapshotType: 'load.now',
        timestamp: '2026-11-20T00:00:00Z',
        metrics: { e: 5, d: 4, c: 3, b: 2, a: { value: 1, label: 'A' } },
      });
      const detail = await worker(ctx, tenant.orgId, workerId);
      assert.equal(detail.displayName, 'Dana');
      assert.equal(detail.email, 'dana@example.com');
      assert.deepEqual(detail.externalIds, [{ app: detail.strip[0]?.app, externalId: 'dana-1' }]);
      assert.deepEqual(detail.connections, [`custom:${tenant.slug}`]);
      assert.deepEqual(detail.strip, [
        {
          app: { id: tenant.appId, slug: tenant.slug, name: detail.strip[0]?.app.name },
          snapshotType: 'load.now',
          timestamp: '2026-11-20T00:00:00.000Z',
          metrics: [
            { id: 'e', value: 5 },
            { id: 'd', value: 4 },
            { id: 'c', value: 3 },
            { id: 'b', value: 2 },
          ],
        },
      ]);
      const other = await createTenant(db);
      await assert.rejects(worker(ctx, other.orgId, workerId), (err: ApiError) => err.code === 'worker_not_found');
      await assert.rejects(snapshotHistory(ctx, other.orgId, workerId, {}), (err: ApiError) => err.code === 'worker_not_found');
    });

    it('keeps every snapshot in history, superseded and older ones included, with all metrics', async () => {
      const { app, tenant, ctx } = await tenantWithApp();
      const post = (timestamp: string, open: number) =>
        ingestSnapshot(app, tenant.key, { actor: { externalId: 'h' }, timestamp, metrics: { open, a: 1, b: 2, c: 3, d: 4 } });
      const workerId = await post('2026-11-20T10:00:00Z', 1);
      await post('2026-11-20T09:00:00Z', 2); // older: history only
      await post('2026-11-20T11:00:00Z', 3); // supersedes the first
      const history = await snapshotHistory(ctx, tenant.orgId, workerId, {});
      assert.deepEqual(
        history.items.map((s) => [s.timestamp, s.metrics[0]?.value, s.metrics.length]),
        [
          ['2026-11-20T11:00:00.000Z', 3, 5],
          ['2026-11-20T10:00:00.000Z', 1, 5],
          ['2026-11-20T09:00:00.000Z', 2, 5],
        ],
      );
      const ranged = await snapshotHistory(ctx, tenant.orgId, workerId, {
        from: '2026-11-20T09:30:00Z',
        snapshotType: 'oncall.load',
        limit: 1,
      });
      assert.equal(ranged.items[0]?.metrics[0]?.value, 3);
      const next = await snapshotHistory(ctx, tenant.orgId, workerId, {
        from: '2026-11-20T09:30:00Z',
        snapshotType: 'oncall.load',
        limit: 1,
        cursor: ranged.nextCursor as string,
      });
      assert.equal(next.items[0]?.metrics[0]?.value, 1);
      assert.equal(next.nextCursor, null);
    });
  });

  describe('export', () => {
    it('reads every matching row, page after page', async () => {
      const { app, tenant, ctx } = await tenantWithApp();
      await ingest(
        app,
        tenant.key,
        Array.from({ length: 25 }, (_, i) => ({ timestamp: `2026-11-20T10:${String(i).padStart(2, '0')}:00Z` })),
      );
      const pages: number[] = [];
      for await (const rows of timelineExport(ctx, tenant.orgId, { from: '2026-11-20T10:05:00Z' }, 7)) pages.push(rows.length);
      assert.deepEqual(pages, [7, 7, 6]);
    });

    it('writes RFC 4180 CSV with formula starts defused', () => {
      assert.equal(csvCell('plain'), 'plain');
      assert.equal(csvCell('a,b'), '"a,b"');
      assert.equal(csvCell('say "hi"'), '"say ""hi"""');
      assert.equal(csvCell('two\r\nlines'), '"two\r\nlines"');
      assert.equal(csvCell('=SUM(A1)'), "'=SUM(A1)");
      assert.equal(csvCell('+1'), "'+1");
      assert.equal(csvCell('-2'), "'-2");
      assert.equal(csvCell('@cmd'), "'@cmd");
      assert.equal(csvCell('=a,"b"'), `"'=a,""b"""`);
      assert.equal(csvCell(undefined), '');
      assert.equal(csvCell(5), '5');
      assert.ok(csvHeader.startsWith('id,kind,integrationId,'));
      const row = {
        id: 'evt_1',
        kind: 'event' as const,
        integrationId: 'custom:a',
        app: { id: 'app_1', slug: 'a', name: 'A, Inc.' },
        worker: { id: 'wkr_1', displayName: '=HYPERLINK("x")' },
        eventType: 't.x',
        timestamp: '2026-11-20T10:00:00.000Z',
        receivedAt: '2026-11-20T10:00:01.000Z',
        metadata: { note: 'a "quote"' },
        requestId: 'req_1',
      };
      assert.equal(
        exportRecord('csv', row),
        `evt_1,event,custom:a,app_1,a,"A, Inc.",wkr_1,"'=HYPERLINK(""x"")",t.x,,2026-11-20T10:00:00.000Z,2026-11-20T10:00:01.000Z,,,,req_1,"{""note"":""a \\""quote\\""""}",\r\n`,
      );
      assert.deepEqual(JSON.parse(exportRecord('ndjson', row)), row);
    });
  });
});

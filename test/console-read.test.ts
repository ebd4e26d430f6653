import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { setTimeZone } from '../src/data/organizations';
import { client } from './support/client';
import { ingest, ingestSnapshot } from './support/console-data';
import { signIn } from './support/console';
import { createTenant, setup } from './support/fixtures';

const TIMELINE = '/api/v1/console/timeline';

function assertInvalidQuery(res: { status: number; body: { error?: { code: string; message: string } } }, parameter: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error?.code, 'invalid_query');
  assert.match(res.body.error?.message ?? '', new RegExp(parameter), `the message names ${parameter}`);
}

/** A tenant with events and a snapshot, and a member of it signed in. */
async function readable() {
  const s = await setup();
  const { app, db, tenant } = s;
  const ids = await ingest(app, tenant.key, [
    {
      timestamp: '2026-11-20T10:00:00Z',
      actor: { externalId: 'dana-1', displayName: 'Dana', email: 'dana@example.com' },
      metadata: { note: '=1+1' },
    },
    {
      timestamp: '2026-11-20T11:00:00Z',
      actor: { externalId: 'eli-1', displayName: 'Eli' },
      eventType: 'build.finished',
      category: 'CODE_CHANGE',
    },
    { timestamp: '2026-11-20T12:00:00Z', actor: { externalId: 'dana-1' } },
  ]);
  const workerId = await ingestSnapshot(app, tenant.key, {
    actor: { externalId: 'dana-1' },
    timestamp: '2026-11-20T13:00:00Z',
    metrics: { a: 1, b: 2, c: 3, d: 4, e: 5 },
  });
  const { console: api } = await signIn(app, db, { orgId: tenant.orgId });
  return { ...s, api, ids, workerId };
}

async function chunksOf(
  app: Express,
  path: string,
  cookie: string,
): Promise<{ chunks: number; body: string; headers: http.IncomingHttpHeaders }> {
  const server = app.listen(0);
  try {
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as AddressInfo).port;
    return await new Promise((resolve, reject) => {
      http
        .get({ port, path, headers: { cookie } }, (res) => {
          let chunks = 0;
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            chunks++;
            body += chunk;
          });
          res.on('end', () => resolve({ chunks, body, headers: res.headers }));
        })
        .on('error', reject);
    });
  } finally {
    server.close();
  }
}

describe('Console reads over HTTP', () => {
  it('needs a session', async () => {
    const { app } = await setup();
    for (const path of [TIMELINE, `${TIMELINE}/workers`, `${TIMELINE}/export`, '/api/v1/console/workers']) {
      const res = await client(app).get(path);
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'session_required');
    }
  });

  describe('GET /timeline', () => {
    it('lists the rows newest first with their app and worker, and pages with a cursor', async () => {
      const { api, ids, tenant } = await readable();
      const all = await api.get(TIMELINE);
      assert.equal(all.status, 200);
      assert.deepEqual(
        all.body.items.map((r: { kind: string }) => r.kind),
        ['snapshot', 'event', 'event', 'event'],
      );
      assert.deepEqual(
        all.body.items.slice(1).map((r: { id: string }) => r.id),
        [...ids].reverse(),
      );
      assert.equal(all.body.items[3].app.slug, tenant.slug);
      assert.equal(all.body.items[3].worker.displayName, 'Dana');
      assert.equal(all.body.nextCursor, null);
      const first = await api.get(`${TIMELINE}?kind=event&limit=2`);
      assert.equal(first.body.items.length, 2);
      const second = await api.get(`${TIMELINE}?kind=event&limit=2&cursor=${first.body.nextCursor}`);
      assert.deepEqual(
        second.body.items.map((r: { id: string }) => r.id),
        [ids[0]],
      );
      assert.equal(second.body.nextCursor, null);
      // Colons as they are, as curl sends them; a + offset encoded.
      const ranged = await api.get(`${TIMELINE}?from=2026-11-20T11:00:00%2B00:00&to=2026-11-20T12:00:00Z`);
      assert.equal(ranged.status, 200, ranged.text);
      assert.deepEqual(
        ranged.body.items.map((r: { id: string }) => r.id),
        [ids[1]],
      );
    });

    it('answers bad parameters with 400 invalid_query naming the parameter', async () => {
      const { api } = await readable();
      assertInvalidQuery(await api.get(`${TIMELINE}?limit=0`), 'limit');
      assertInvalidQuery(await api.get(`${TIMELINE}?limit=201`), 'limit');
      assertInvalidQuery(await api.get(`${TIMELINE}?limit=ten`), 'limit');
      assertInvalidQuery(await api.get(`${TIMELINE}?limit=1e400`), 'limit');
      assertInvalidQuery(await api.get('/api/v1/console/workers?limit=1e400'), 'limit');
      assertInvalidQuery(await api.get(`${TIMELINE}?from=yesterday`), 'from');
      assertInvalidQuery(await api.get(`${TIMELINE}?from=2026-11-20`), 'from');
      assertInvalidQuery(await api.get(`${TIMELINE}?to=2026-11-20T10:00:00`), 'to');
      assertInvalidQuery(await api.get(`${TIMELINE}?from=2026-02-30T10:00:00Z`), 'from');
      assertInvalidQuery(await api.get(`${TIMELINE}?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z`), 'from');
      assertInvalidQuery(await api.get(`${TIMELINE}?colour=red`), 'colour');
      assertInvalidQuery(await api.get(`${TIMELINE}?kind=other`), 'kind');
      assertInvalidQuery(await api.get(`${TIMELINE}?workerId=not-a-worker`), 'workerId');
      assertInvalidQuery(await api.get(`${TIMELINE}?appId=app_nope`), 'appId');
      assertInvalidQuery(await api.get(`${TIMELINE}?category=NOPE`), 'category');
      assertInvalidQuery(await api.get(`${TIMELINE}?cursor=forged.cursor`), 'cursor');
      assertInvalidQuery(await api.get(`${TIMELINE}?cursor=${'a'.repeat(1001)}`), 'cursor');
      assertInvalidQuery(await api.get(`${TIMELINE}/workers?day=2026-11-31`), 'day');
      assertInvalidQuery(await api.get(`${TIMELINE}/workers?day=20261120`), 'day');
      assertInvalidQuery(await api.get('/api/v1/console/workers/nope'), 'workerId');
      assertInvalidQuery(await api.get('/api/v1/console/workers/nope/snapshots'), 'workerId');
      assertInvalidQuery(await api.get('/api/v1/console/workers?q='), 'q');
      // Database text cannot hold NUL: refused by the contract rather than failing in PostgreSQL.
      assertInvalidQuery(await api.get('/api/v1/console/workers?q=%00%20'), 'q');
      assertInvalidQuery(await api.get(`${TIMELINE}/export?format=xlsx`), 'format');
    });

    it('refuses a tampered cursor, one of another organization and one reused with other filters', async () => {
      const { app, db, api } = await readable();
      const page = await api.get(`${TIMELINE}?kind=event&limit=1`);
      const cursor: string = page.body.nextCursor;
      const [payload, signature] = cursor.split('.') as [string, string];
      const shifted = Buffer.from(JSON.stringify(['2099-01-01T00:00:00.000Z', 'evt_x'])).toString('base64url');
      assertInvalidQuery(await api.get(`${TIMELINE}?kind=event&cursor=${shifted}.${signature}`), 'cursor');
      assertInvalidQuery(await api.get(`${TIMELINE}?kind=event&cursor=${payload}.${signature.slice(0, -2)}AA`), 'cursor');
      assertInvalidQuery(await api.get(`${TIMELINE}?kind=snapshot&cursor=${cursor}`), 'cursor');
      assertInvalidQuery(await api.get(`${TIMELINE}?cursor=${cursor}`), 'cursor');
      assertInvalidQuery(await api.get(`/api/v1/console/workers?cursor=${cursor}`), 'cursor');
      const stranger = await signIn(app, db);
      assertInvalidQuery(await stranger.console.get(`${TIMELINE}?kind=event&cursor=${cursor}`), 'cursor');
    });
  });

  describe('GET /timeline/workers', () => {
    it("groups a day of the organization's time zone per worker, today there by default", async () => {
      const { api, db, tenant } = await readable();
      await setTimeZone(db.kysely, tenant.orgId, 'America/Los_Angeles');
      // 2026-11-20 in Los Angeles is 08:00Z to 08:00Z next day: all four rows.
      const res = await api.get(`${TIMELINE}/workers?day=2026-11-20`);
      assert.equal(res.status, 200);
      assert.equal(res.body.timeZone, 'America/Los_Angeles');
      assert.deepEqual(
        res.body.items.map((g: { worker: { displayName: string }; count: number; rows: unknown[] }) => [
          g.worker.displayName,
          g.count,
          g.rows.length,
        ]),
        [
          ['Dana', 3, 3],
          ['Eli', 1, 1],
        ],
      );
      const page = await api.get(`${TIMELINE}/workers?day=2026-11-20&limit=1`);
      const next = await api.get(`${TIMELINE}/workers?day=2026-11-20&limit=1&cursor=${page.body.nextCursor}`);
      assert.equal(next.body.items[0].worker.displayName, 'Eli');
      assertInvalidQuery(await api.get(`${TIMELINE}/workers?day=2026-11-21&limit=1&cursor=${page.body.nextCursor}`), 'cursor');
      const today = await api.get(`${TIMELINE}/workers`);
      assert.equal(today.status, 200);
      assert.match(today.body.day, /^\d{4}-\d{2}-\d{2}$/);
    });
  });

  describe('GET /workers, /workers/{id}, /workers/{id}/snapshots', () => {
    it('searches by a case-insensitive prefix of name, email or externalId', async () => {
      const { api } = await readable();
      const names = async (q: string) =>
        (await api.get(`/api/v1/console/workers?q=${encodeURIComponent(q)}`)).body.items.map((w: { displayName: string }) => w.displayName);
      assert.deepEqual(await names('DA'), ['Dana']);
      assert.deepEqual(await names('Dana@EX'), ['Dana']);
      assert.deepEqual(await names('ELI-'), ['Eli']);
      assert.deepEqual(await names('zz'), []);
      const all = await api.get('/api/v1/console/workers');
      assert.deepEqual(
        all.body.items.map((w: { displayName: string }) => w.displayName),
        ['Dana', 'Eli'],
      );
      assert.equal(all.body.items[0].lastActivityAt, '2026-11-20T13:00:00.000Z');
    });

    it('shows a worker with externalIds, connections and the strip, and its snapshot history', async () => {
      const { api, tenant, workerId } = await readable();
      const res = await api.get(`/api/v1/console/workers/${workerId}`);
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.externalIds.map((x: { externalId: string }) => x.externalId),
        ['dana-1'],
      );
      assert.deepEqual(res.body.connections, [`custom:${tenant.slug}`]);
      assert.deepEqual(
        res.body.strip[0].metrics.map((m: { id: string }) => m.id),
        ['a', 'b', 'c', 'd'],
      );
      const history = await api.get(`/api/v1/console/workers/${workerId}/snapshots`);
      assert.equal(history.status, 200);
      assert.equal(history.body.items.length, 1);
      assert.equal(history.body.items[0].metrics.length, 5);
    });
  });

  describe('GET /timeline/export', () => {
    it('streams CSV with a fixed header, RFC 4180 quoting and formula starts defused, as an attachment', async () => {
      const { api, ids } = await readable();
      const res = await api.get(`${TIMELINE}/export?format=csv&kind=event`);
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/csv/);
      assert.match(String(res.headers['content-disposition']), /^attachment; filename="timeline-org_[\w-]+-[\dTZ-]+\.csv"$/);
      const lines = res.text.split('\r\n');
      assert.equal(
        lines[0],
        'id,kind,integrationId,appId,appSlug,appName,workerId,workerName,type,category,timestamp,receivedAt,duration,pillar,statisticId,requestId,metadata,metrics',
      );
      assert.equal(lines.length, 5, 'header, three rows, and the final line end');
      assert.ok(lines[3]?.startsWith(`${ids[0]},event,`));
      assert.ok(lines[3]?.endsWith(',"{""note"":""=1+1""}",'), lines[3]);
    });

    it('streams NDJSON, one timeline row per line', async () => {
      const { api } = await readable();
      const res = await api.get(`${TIMELINE}/export?format=ndjson`);
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^application\/x-ndjson/);
      assert.match(String(res.headers['content-disposition']), /\.ndjson"$/);
      const rows = res.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.deepEqual(
        rows.map((r) => r.kind),
        ['snapshot', 'event', 'event', 'event'],
      );
      assert.deepEqual(rows[0].metrics[0], { id: 'a', value: 1 });
    });

    it('sends a large export in pieces as it reads it, not as one buffered body', async () => {
      const { app, db, tenant } = await setup();
      const events = Array.from({ length: 500 }, (_, i) => ({
        timestamp: new Date(Date.UTC(2026, 10, 20, 0, 0, i)).toISOString(),
        actor: { externalId: `w-${i % 7}` },
      }));
      for (let i = 0; i < 3; i++) await ingest(app, tenant.key, events);
      const { cookie } = await signIn(app, db, { orgId: tenant.orgId });
      const res = await chunksOf(app, `${TIMELINE}/export?format=ndjson`, cookie);
      assert.equal(res.headers['transfer-encoding'], 'chunked');
      assert.equal(res.headers['content-length'], undefined);
      assert.equal(res.body.trim().split('\n').length, 1500);
      assert.ok(res.chunks >= 2, `${res.chunks} chunks`);
    });
  });

  describe('isolation', () => {
    it("answers another organization's worker, app and cursor as if they did not exist, and never reveals a secret", async () => {
      const { app, db, api, workerId, tenant } = await readable();
      const stranger = await signIn(app, db, { orgId: (await createTenant(db)).orgId });
      const s = stranger.console;
      const empty = async (path: string) => {
        const res = await s.get(path);
        assert.equal(res.status, 200, path);
        assert.deepEqual(res.body.items, [], path);
      };
      await empty(TIMELINE);
      await empty(`${TIMELINE}?workerId=${workerId}`);
      await empty(`${TIMELINE}?appId=${tenant.appId}`);
      await empty(`${TIMELINE}/workers?day=2026-11-20`);
      await empty('/api/v1/console/workers?q=dana');
      for (const path of [`/api/v1/console/workers/${workerId}`, `/api/v1/console/workers/${workerId}/snapshots`]) {
        const res = await s.get(path);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.error.code, 'worker_not_found');
      }
      const exported = await s.get(`${TIMELINE}/export?format=ndjson&workerId=${workerId}`);
      assert.equal(exported.text, '');
      const keyRow = await db.kysely.selectFrom('api_keys').select(['key_hash']).where('id', '=', tenant.keyId).executeTakeFirstOrThrow();
      for (const path of [
        TIMELINE,
        `${TIMELINE}/workers?day=2026-11-20`,
        '/api/v1/console/workers',
        `/api/v1/console/workers/${workerId}`,
        `${TIMELINE}/export?format=csv`,
      ]) {
        const text = (await api.get(path)).text;
        assert.ok(!text.includes(tenant.key) && !text.includes(keyRow.key_hash), `${path} reveals no key`);
        assert.ok(!/password|scrypt|argon/i.test(text), `${path} reveals no password hash`);
      }
    });
  });
});

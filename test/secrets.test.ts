import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import pino from 'pino';
import { createApp } from '../src/app';
import {
  addWorker,
  changeAllowedEventTypes,
  createApp as createIntegrationApp,
  issueKey,
  revokeKey,
  setPlan,
} from '../src/domain/administration';
import { createHttpServer } from '../src/http/http-server';
import { client } from './support/client';
import { assertContract } from './support/contract';
import { event } from './support/events';
import { createTenant, issueExpiredKey, setup } from './support/fixtures';
import { rawExchange, sendBytes } from './support/http-bytes';

const EVENTS = '/api/v1/ingest/events';
const SNAPSHOTS = '/api/v1/ingest/snapshots';
const STATISTICS = '/api/v1/apps/statistics';

type Setup = Awaited<ReturnType<typeof setup>>;

/** Every 12-character window of a key's secret part: a log line holding any of them gives part of the key away. */
function secretWindows(key: string): string[] {
  const secret = key.slice('svc_live_'.length);
  return Array.from({ length: secret.length - 11 }, (_, i) => secret.slice(i, i + 12));
}

describe('Secrets', () => {
  it('no log line, at any level, holds a key or part of its secret, whatever the request and wherever the key was put', async function () {
    this.timeout(30_000);
    const { db, config, tenant } = await setup({ HEADERS_TIMEOUT_SECONDS: '1', REQUEST_TIMEOUT_SECONDS: '1' });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).trim().split('\n'));
        done();
      },
    });
    const logger = pino({ level: 'trace' }, sink);
    const server: Server = createHttpServer(createApp(config, db, { logger }), config, logger).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;

    const revoked = await issueKey(db, tenant.appId);
    await revokeKey(db, revoked.id);
    const expired = await issueExpiredKey(db, tenant.appId);
    const unpaid = await createTenant(db);
    await setPlan(db, unpaid.orgId, { apiEnabled: false });
    const wellFormedUnknown = `svc_live_${randomBytes(32).toString('base64url')}`;
    const keys = [tenant.key, revoked.key, expired.key, unpaid.key, wellFormedUnknown, tenant.key.slice(0, -1), `${tenant.key}x`];

    let requests = 0;
    const send = async (method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
      requests += 1;
      const res = await sendBytes(port, {
        method,
        path,
        headers: {
          Authorization: `Bearer ${key}`,
          'Idempotency-Key': key,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: body === undefined || Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      });
      assertContract(res, { method, path: path.split('?')[0] as string });
      return res;
    };
    for (const key of keys) {
      // The key also travels where it does not belong: in bodies, in a query string, in a path.
      await send('GET', '/api/v1/ingest/ping', key);
      await send('POST', EVENTS, key, {
        events: [event({ actor: { externalId: key, displayName: key }, metadata: { token: key } }), event({ eventType: key })],
      });
      await send('POST', EVENTS, key, `{"events": [${JSON.stringify(key)}`);
      await send('POST', SNAPSHOTS, key, {
        snapshotType: 'load.now',
        actor: { externalId: key },
        metrics: { [key.slice(-20)]: 1 },
        metadata: { key },
      });
      await send('GET', STATISTICS, key);
      await send('PUT', STATISTICS, key, [{ id: key }]);
      await send('GET', `/api/v1/ingest/ping?api_key=${key}`, key);
      await send('PROPFIND', EVENTS, key);
      await send('GET', `/api/v1/${key}`, key);
      await send('POST', EVENTS, key, zlib.gzipSync(`{"events": ${key}`), { 'Content-Encoding': 'gzip' });
    }
    await send('GET', '/api/v1/ingest/ping', tenant.key, undefined, {
      Authorization: `Basic ${Buffer.from(`user:${tenant.key}`).toString('base64')}`,
    });
    // Refused before the app: over-long headers, bytes that are not HTTP, a request that never ends.
    await rawExchange(
      port,
      `GET /api/v1/ingest/ping HTTP/1.1\r\nAuthorization: Bearer ${tenant.key}\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    await rawExchange(port, `GET /api/v1/ingest/ping HTTP/1.1\r\nAuthorization: Bearer ${tenant.key}\r\nBad Header: ${tenant.key}\r\n\r\n`);
    await rawExchange(
      port,
      `POST ${EVENTS} HTTP/1.1\r\nAuthorization: Bearer ${tenant.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"events": "${tenant.key}`,
    );
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));

    assert.ok(lines.length >= requests, `every request was logged (${lines.length} lines for ${requests} requests)`);
    const everything = lines.join('\n');
    for (const key of keys) {
      assert.ok(!everything.includes(key), `the key ${key.slice(0, 15)}… is in the logs`);
      const leaked = secretWindows(key).find((part) => everything.includes(part));
      assert.equal(leaked, undefined, `part of the secret of ${key.slice(0, 15)}… is in the logs`);
    }
  });
});

describe('Isolation between organizations and apps', () => {
  let first: Setup;
  let second: Setup;

  beforeEach(async () => {
    first = await setup();
    second = await setup();
  });

  /** A manifest of one definition, `<slug>.<name>`. */
  const manifest = (slug: string, name: string) => [
    {
      id: `${slug}.${name}`,
      label: name,
      pillar: 'DELIVERY',
      format: 'number',
      aggregation: 'count',
      sourceEventTypes: ['ticket.resolved'],
      sourceEventCategories: ['TASK_UPDATE'],
    },
  ];

  it("a key reads and replaces only its own app's manifest", async () => {
    const api = client(first.app);
    assert.equal((await api.put(STATISTICS, { key: first.tenant.key, body: manifest(first.tenant.slug, 'mine') })).status, 200);
    assert.equal((await api.put(STATISTICS, { key: second.tenant.key, body: manifest(second.tenant.slug, 'theirs') })).status, 200);

    const intrusion = await api.put(STATISTICS, { key: second.tenant.key, body: manifest(first.tenant.slug, 'planted') });
    assert.equal(intrusion.status, 400, "another app's ids are refused");
    assert.equal(intrusion.body.error.code, 'invalid_body');
    const ids = async (key: string) => (await api.get(STATISTICS, { key })).body.statistics.map((d: { id: string }) => d.id);
    assert.deepEqual(await ids(first.tenant.key), [`${first.tenant.slug}.mine`]);
    assert.deepEqual(await ids(second.tenant.key), [`${second.tenant.slug}.theirs`]);

    const foreignStatistic = await api.post(EVENTS, {
      key: second.tenant.key,
      body: { events: [event({ statisticId: `${first.tenant.slug}.mine` })] },
    });
    assert.equal(foreignStatistic.status, 400, "an event cannot name another app's statistic");
  });

  it("another organization's worker is worker_not_found by workerId, and its externalIds and emails do not match", async () => {
    const api = client(first.app);
    const theirs = await addWorker(second.db, { orgId: second.tenant.orgId, email: 'dana@shared.example', name: 'Dana (theirs)' });
    const linked = await api.post(SNAPSHOTS, {
      key: second.tenant.key,
      body: { snapshotType: 'load.now', actor: { externalId: 'shared-ext', email: 'dana@shared.example' }, metrics: { a: 1 } },
    });
    assert.equal(linked.status, 202);
    assert.equal(linked.body.worker.id, theirs.id);

    const byId = await api.post(EVENTS, { key: first.tenant.key, body: { events: [event({ actor: { workerId: theirs.id } })] } });
    assert.equal(byId.status, 404);
    assert.equal(byId.body.error.code, 'worker_not_found');
    const snapshotById = await api.post(SNAPSHOTS, {
      key: first.tenant.key,
      body: { snapshotType: 'load.now', actor: { workerId: theirs.id }, metrics: { a: 1 } },
    });
    assert.equal(snapshotById.status, 404);
    assert.equal(snapshotById.body.error.code, 'worker_not_found');

    const byExternalId = await api.post(SNAPSHOTS, {
      key: first.tenant.key,
      body: { snapshotType: 'load.now', actor: { externalId: 'shared-ext' }, metrics: { a: 1 } },
    });
    const byEmail = await api.post(SNAPSHOTS, {
      key: first.tenant.key,
      body: { snapshotType: 'load.now', actor: { email: 'DANA@shared.example' }, metrics: { a: 1 } },
    });
    for (const res of [byExternalId, byEmail]) {
      assert.equal(res.status, 202);
      assert.notEqual(res.body.worker.id, theirs.id);
      const worker = await first.db.kysely
        .selectFrom('workers')
        .select('org_id')
        .where('id', '=', res.body.worker.id)
        .executeTakeFirstOrThrow();
      assert.equal(worker.org_id, first.tenant.orgId, 'a worker of the caller’s own organization');
    }
    const theirEvents = await second.db.kysely.selectFrom('events').select('org_id').where('worker_id', '=', theirs.id).execute();
    assert.deepEqual(
      theirEvents.map((e) => e.org_id),
      [second.tenant.orgId],
      "nothing was written to the other organization's worker",
    );
  });

  it('an externalId of another app of the same organization is not matched: externalIds are per app', async () => {
    const api = client(first.app);
    const sibling = await createIntegrationApp(first.db, {
      orgId: first.tenant.orgId,
      slug: `sib-${first.tenant.slug}`.slice(0, 40),
      name: 'Sibling',
      asEmail: first.tenant.ownerEmail,
    });
    await changeAllowedEventTypes(first.db, sibling.id, ['ticket.resolved'], true);
    const siblingKey = await issueKey(first.db, sibling.id);
    const snapshot = { snapshotType: 'load.now', actor: { externalId: 'ext-1' }, metrics: { a: 1 } };
    const mine = await api.post(SNAPSHOTS, { key: first.tenant.key, body: snapshot });
    const ours = await api.post(SNAPSHOTS, { key: siblingKey.key, body: snapshot });
    assert.notEqual(ours.body.worker.id, mine.body.worker.id);
    const again = await api.post(SNAPSHOTS, { key: first.tenant.key, body: snapshot });
    for (const res of [mine, ours, again]) assert.equal(res.status, 202);
    assert.equal(again.body.worker.id, mine.body.worker.id);
  });

  it('the same Idempotency-Key under two keys gives two independent results', async () => {
    const api = client(first.app);
    const sameApp = await issueKey(first.db, first.tenant.appId);
    const post = (key: string, externalId: string) =>
      api.post(EVENTS, {
        key,
        headers: { 'Idempotency-Key': 'shared-idempotency-key' },
        body: { events: [event({ actor: { externalId } })] },
      });
    const original = await post(first.tenant.key, 'mine');
    const retry = await post(first.tenant.key, 'mine');
    assert.equal(retry.headers['idempotent-replayed'], 'true', 'the first key replays its own response');
    assert.equal(retry.text, original.text);

    for (const key of [second.tenant.key, sameApp.key]) {
      const other = await post(key, `other-${key.slice(-6)}`);
      assert.equal(other.status, 202, 'neither a replay of the other key’s response nor a conflict with it');
      assert.equal(other.headers['idempotent-replayed'], undefined);
      assert.notEqual(other.body.requestId, original.body.requestId);
    }
    assert.equal((await post(first.tenant.key, 'mine')).text, original.text, 'the first key still replays its own response');
  });
});

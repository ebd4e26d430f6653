import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import pino from 'pino';
import { createApp } from '../src/app';
import { issueKey, revokeKey, setPlan } from '../src/domain/administration';
import { createHttpServer } from '../src/http/http-server';
import { assertContract } from './support/contract';
import { event } from './support/events';
import { createTenant, setup } from './support/fixtures';
import { rawExchange, sendBytes } from './support/http-bytes';

const EVENTS = '/api/v1/ingest/events';
const SNAPSHOTS = '/api/v1/ingest/snapshots';
const STATISTICS = '/api/v1/apps/statistics';

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
    const expired = await issueKey(db, tenant.appId, '2020-01-01T00:00:00Z');
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
        headers: { Authorization: `Bearer ${key}`, 'Idempotency-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined || Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      });
      assertContract(res, { method, path: path.split('?')[0] as string });
      return res;
    };
    for (const key of keys) {
      // The key also travels where it does not belong: in bodies, in a query string, in a path.
      await send('GET', '/api/v1/ingest/ping', key);
      await send('POST', EVENTS, key, { events: [event({ actor: { externalId: key, displayName: key }, metadata: { token: key } }), event({ eventType: key })] });
      await send('POST', EVENTS, key, `{"events": [${JSON.stringify(key)}`);
      await send('POST', SNAPSHOTS, key, { snapshotType: 'load.now', actor: { externalId: key }, metrics: { [key.slice(-20)]: 1 }, metadata: { key } });
      await send('GET', STATISTICS, key);
      await send('PUT', STATISTICS, key, [{ id: key }]);
      await send('GET', `/api/v1/ingest/ping?api_key=${key}`, key);
      await send('PROPFIND', EVENTS, key);
      await send('GET', `/api/v1/${key}`, key);
      await send('POST', EVENTS, key, zlib.gzipSync(`{"events": ${key}`), { 'Content-Encoding': 'gzip' });
    }
    await send('GET', '/api/v1/ingest/ping', tenant.key, undefined, { Authorization: `Basic ${Buffer.from(`user:${tenant.key}`).toString('base64')}` });
    // Refused before the app: over-long headers, bytes that are not HTTP, a request that never ends.
    await rawExchange(port, `GET /api/v1/ingest/ping HTTP/1.1\r\nAuthorization: Bearer ${tenant.key}\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    await rawExchange(port, `GET /api/v1/ingest/ping HTTP/1.1\r\nAuthorization: Bearer ${tenant.key}\r\nBad Header: ${tenant.key}\r\n\r\n`);
    await rawExchange(port, `POST ${EVENTS} HTTP/1.1\r\nAuthorization: Bearer ${tenant.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"events": "${tenant.key}`);
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

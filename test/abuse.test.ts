import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createHttpServer } from '../src/http/http-server';
import { assertContract } from './support/contract';
import { event } from './support/events';
import { setup, silentLogger } from './support/fixtures';
import { parseRawResponse, rawExchange, sendBytes } from './support/http-bytes';

const EVENTS = '/api/v1/ingest/events';
const PING = '/api/v1/ingest/ping';

/** Short timeouts, so that the slow clients below are cut off within seconds. */
const timeouts = { HEADERS_TIMEOUT_SECONDS: '1', REQUEST_TIMEOUT_SECONDS: '2' };

/** A raw answer read as the contract sees it, checked against it at `path`. */
function answerOf(text: string, method: string, path: string) {
  const res = parseRawResponse(text);
  assertContract(res, { method, path });
  return res;
}

describe('Slow and abusive clients (a listening server, built as src/server.ts builds it)', function () {
  this.timeout(20_000);
  let server: Server;
  let port: number;
  let key: string;

  before(async () => {
    const { app, config, tenant } = await setup(timeouts);
    key = tenant.key;
    server = createHttpServer(app, config, silentLogger).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('cuts off a body that trickles in: 408 request_timeout once REQUEST_TIMEOUT_SECONDS has passed, and closes', async () => {
    const started = Date.now();
    const head = `POST ${EVENTS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const { response, sentBytes } = await rawExchange(
      port,
      head,
      Array.from({ length: 1000 }, () => Buffer.from(' ')),
      100,
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 1900 && elapsed < 4500, `cut off after ${elapsed} ms`);
    assert.ok(sentBytes < 60, `${sentBytes} bytes of 1000 were sent`);
    const res = answerOf(response, 'POST', EVENTS);
    assert.equal(res.status, 408);
    assert.equal((res.body.error as { code: string }).code, 'request_timeout');
    assert.equal(res.headers.connection, 'close');
  });

  it('cuts off headers that trickle in (slowloris) once HEADERS_TIMEOUT_SECONDS has passed', async () => {
    const started = Date.now();
    const trickle = Array.from({ length: 200 }, (_, i) => Buffer.from(i % 2 ? '\r\n' : 'X-Slow: 1'));
    const { response } = await rawExchange(port, `GET ${PING} HTTP/1.1\r\nHost: localhost\r\n`, trickle, 100);
    assert.ok(Date.now() - started < 3500, `cut off after ${Date.now() - started} ms`);
    assert.equal(answerOf(response, 'GET', PING).status, 408);
  });

  it('serves a normal request while 200 idle connections are open, then drops the idle ones with 408', async () => {
    const idle = Array.from({ length: 200 }, () => {
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (d) => (received += String(d)));
      socket.on('error', () => {});
      return { socket, closed: new Promise<string>((resolve) => socket.on('close', () => resolve(received))) };
    });
    await Promise.all(idle.map(({ socket }) => new Promise((resolve) => socket.once('connect', resolve))));

    const started = Date.now();
    const res = await sendBytes(port, { method: 'GET', path: PING, headers: { Authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assert.ok(Date.now() - started < 1000, `answered in ${Date.now() - started} ms`);

    const answers = await Promise.all(idle.map(({ closed }) => closed));
    assert.ok(Date.now() - started < 4000, 'the idle connections were dropped by the headers timeout');
    for (const text of answers) assert.equal(answerOf(text, 'GET', '/').status, 408);
  });

  it('answers a 100 KB header with 431 headers_too_large in the contract shape, and closes', async () => {
    const head = `GET ${PING} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nX-Padding: ${'a'.repeat(100 * 1024)}\r\n\r\n`;
    const { response } = await rawExchange(port, head);
    const res = answerOf(response, 'GET', PING);
    assert.equal(res.status, 431);
    assert.equal((res.body.error as { code: string }).code, 'headers_too_large');
    assert.match((res.body.error as { docsUrl: string }).docsUrl, /^http:\/\/127\.0\.0\.1:\d+\/docs#section\/Errors\/headers_too_large$/);
    assert.equal(res.headers['x-request-id'], (res.body.error as { requestId: string }).requestId);
  });

  it('answers a body that is not JSON with 415 unsupported_media_type', async () => {
    const res = await sendBytes(port, {
      method: 'POST',
      path: EVENTS,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'text/plain' },
      body: Buffer.from(JSON.stringify({ events: [event()] })),
    });
    assertContract(res, { method: 'POST', path: EVENTS });
    assert.equal(res.status, 415);
    assert.equal((res.body.error as { code: string }).code, 'unsupported_media_type');
  });

  it('answers methods the API does not have in the contract shape: 405 on an endpoint, 404 elsewhere, 400 for a method HTTP does not know', async () => {
    const cases: Array<[string, string, number, string]> = [
      ['PROPFIND', EVENTS, 405, 'method_not_allowed'],
      ['TRACE', PING, 405, 'method_not_allowed'],
      ['PATCH', '/api/v1/apps/statistics', 405, 'method_not_allowed'],
      ['PROPFIND', '/nowhere', 404, 'not_found'],
    ];
    for (const [method, path, status, code] of cases) {
      const res = await sendBytes(port, { method, path, headers: { Authorization: `Bearer ${key}` } });
      assertContract(res, { method, path });
      assert.equal(res.status, status, `${method} ${path}`);
      assert.equal((res.body.error as { code: string }).code, code);
    }
    const { response } = await rawExchange(port, `BREW ${PING} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    const res = answerOf(response, 'BREW', PING);
    assert.equal(res.status, 400);
    assert.equal((res.body.error as { code: string }).code, 'invalid_body');
  });
});

import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import type { Server } from 'node:http';
import request from 'supertest';
import { assertContract } from './support/contract';
import { event } from './support/events';
import { setup } from './support/fixtures';
import { rawExchange, sendBytes } from './support/http-bytes';

const EVENTS = '/api/v1/ingest/events';

/** POSTs exact bytes and checks the answer against the contract. */
async function postBytes(port: number, path: string, headers: Record<string, string>, body: Buffer) {
  const response = await sendBytes(port, { method: 'POST', path, headers, body });
  assertContract(response, { method: 'POST', path });
  return response;
}

describe('Request bodies', () => {
  let server: Server;
  let port: number;
  let key: string;

  before(async () => {
    const { app, tenant } = await setup();
    key = tenant.key;
    server = app.listen(0);
    port = (server.address() as AddressInfo).port;
  });
  after(() => server.close());

  it('accepts a gzip-compressed body', async () => {
    const body = zlib.gzipSync(JSON.stringify({ events: [event(), event()] }));
    const res = await postBytes(
      port,
      EVENTS,
      { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body,
    );
    assert.equal(res.status, 202);
    assert.equal(res.body.accepted, 2);
  });

  it('refuses a gzip bomb (8 KB that inflates to 64 MB) with 413 once 1 MB is inflated', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    assert.ok(bomb.length < 100_000);
    const started = Date.now();
    const res = await postBytes(
      port,
      EVENTS,
      { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      bomb,
    );
    assert.equal(res.status, 413);
    assert.equal((res.body.error as { code: string }).code, 'batch_too_large');
    assert.ok(Date.now() - started < 2000, 'refused early, not after inflating everything');
  });

  it('refuses a corrupt gzip body with 400 invalid_body and an unknown encoding with 415', async () => {
    const corrupt = await request(server)
      .post(EVENTS)
      .set('Authorization', `Bearer ${key}`)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('not gzip at all');
    assertContract(corrupt);
    assert.equal(corrupt.status, 400);
    assert.equal(corrupt.body.error.code, 'invalid_body');
    const unknown = await request(server)
      .post(EVENTS)
      .set('Authorization', `Bearer ${key}`)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'br')
      .send('{}');
    assertContract(unknown);
    assert.equal(unknown.status, 415);
    assert.equal(unknown.body.error.code, 'unsupported_media_type');
  });

  it('refuses a non-UTF-8 charset with 415', async () => {
    const res = await request(server)
      .post(EVENTS)
      .set('Authorization', `Bearer ${key}`)
      .set('Content-Type', 'application/json; charset=latin1')
      .send('{}');
    assertContract(res);
    assert.equal(res.status, 415);
  });

  it('accepts a body nested 64 levels deep; 65 levels, or 5,000 in a few KB, is 400 invalid_body, not a stack overflow', async () => {
    // {"events":[{…,"metadata":{"a": brackets}}]}: the envelope, the array, the event and metadata are 4 levels.
    const body = (levels: number) =>
      Buffer.from(
        JSON.stringify({ events: [event({ metadata: { a: 'HOLE' } })] }).replace(
          '"HOLE"',
          `${'['.repeat(levels - 4)}${']'.repeat(levels - 4)}`,
        ),
      );
    const send = (levels: number, path = EVENTS) =>
      postBytes(port, path, { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body(levels));
    assert.equal((await send(64)).status, 202);
    for (const levels of [65, 5_000]) {
      const res = await send(levels);
      assert.equal(res.status, 400, res.text);
      assert.equal((res.body.error as { code: string }).code, 'invalid_body');
      assert.match((res.body.error as { message: string }).message, /deeper than 64 levels/);
    }
    const snapshot = `{"snapshotType":"load.now","actor":{"externalId":"deep"},"metrics":{"a":1},"metadata":{"a":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`;
    const res = await postBytes(
      port,
      '/api/v1/ingest/snapshots',
      { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      Buffer.from(snapshot),
    );
    assert.equal(res.status, 400, res.text);
  });

  it('refuses a number beyond a double (1e400) anywhere in the body with 400 invalid_body, instead of storing it as null', async () => {
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const snapshot = (metric: string) =>
      Buffer.from(`{"snapshotType":"load.now","actor":{"externalId":"big"},"metrics":{"a":${metric}},"metadata":{"b":[4e-400]}}`);
    assert.equal((await postBytes(port, '/api/v1/ingest/snapshots', headers, snapshot('1.7e308'))).status, 202);
    for (const [path, body] of [
      ['/api/v1/ingest/snapshots', snapshot('1e400')],
      ['/api/v1/ingest/snapshots', snapshot('{"value":-1E+400}')],
      [EVENTS, Buffer.from(JSON.stringify({ events: [event({ metadata: { n: 'HOLE' } })] }).replace('"HOLE"', '-1e400'))],
    ] as const) {
      const res = await postBytes(port, path, headers, body);
      assert.equal(res.status, 400, res.text);
      assert.match((res.body.error as { message: string }).message, /has the number -?1[eE]\+?400, beyond the range of a double/);
    }
  });

  it('answers 413 to a declared 50 MB body without reading it, and closes the connection', async () => {
    const head = `POST ${EVENTS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`;
    const chunks = Array.from({ length: 200 }, () => Buffer.alloc(64 * 1024, 0x20));
    const { response, sentBytes } = await rawExchange(port, head, chunks, 5);
    assert.match(response, /^HTTP\/1\.1 413 /);
    assert.match(response, /"code":"batch_too_large"/);
    assert.ok(sentBytes < 4 * 1024 * 1024, `the client was cut off after ${sentBytes} bytes, not made to send 50 MB`);
    assert.match(response, /connection: close/i);
  });

  it('delivers that 413 every time to a client still uploading: the connection closes after the answer, not under it', async () => {
    const head = `POST ${EVENTS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`;
    for (let i = 0; i < 20; i++) {
      // The headers and 2 MB in one write: unread upload sits in the server's receive buffer when it answers.
      const { response } = await rawExchange(
        port,
        Buffer.concat([Buffer.from(head), Buffer.alloc(2 * 1024 * 1024, 0x20)]),
        Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 0x20)),
        0,
      );
      assert.match(response, /^HTTP\/1\.1 413 /, `exchange ${i + 1} of 20`);
    }
  });

  it('answers 413 to a chunked body as soon as it passes 1 MB, without reading the rest', async () => {
    const head = `POST ${EVENTS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const chunk = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
    const { response, sentBytes } = await rawExchange(
      port,
      head,
      Array.from({ length: 200 }, () => chunk),
      5,
    );
    assert.match(response, /^HTTP\/1\.1 413 /);
    assert.ok(sentBytes < 4 * 1024 * 1024, `cut off after ${sentBytes} bytes`);
  });
});

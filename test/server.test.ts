import assert from 'node:assert/strict';
import net from 'node:net';
import { freshDatabaseConfig } from './support/database';
import { databaseUrlOf } from './support/fixtures';
import { startServer } from './support/server-process';
import { runIngestctl } from '../src/cli/ingestctl';

describe('The server process', () => {
  it('finishes an in-flight request on SIGTERM, then closes the database and exits 0', async function () {
    this.timeout(30_000);
    const dbConfig = await freshDatabaseConfig();
    let out = '';
    await runIngestctl(['quickstart', '--json'], { env: { DATABASE_URL: databaseUrlOf(dbConfig) }, out: (t) => (out += t), err: () => {} });
    const { key } = JSON.parse(out);
    const { child, port, exited } = await startServer({ DATABASE_URL: databaseUrlOf(dbConfig) });

    // Headers sent and part of the body: the request is in flight when SIGTERM arrives.
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = '{"events": []}';
    socket.write(
      `POST /api/v1/ingest/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n{"ev`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(child.exitCode, null, 'the server waits for the in-flight request');
    const response = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('close', () => resolve(text));
    });
    socket.write(body.slice(4));
    const answer = await response;
    assert.match(answer, /^HTTP\/1\.1 [24]\d\d /, 'the in-flight request got its answer');
    assert.doesNotMatch(answer, /^HTTP\/1\.1 401 /, 'it was authenticated, so it was waiting for its body');
    assert.equal(await exited, 0);
  });
});

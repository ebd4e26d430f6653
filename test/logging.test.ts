import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createApp } from '../src/app';
import { client } from './support/client';
import { setup } from './support/fixtures';

describe('Structured logs', () => {
  it('log each request as JSON with its request id, and never the key', async () => {
    const { db, config, tenant } = await setup();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).trim().split('\n'));
        done();
      },
    });
    const app = createApp(config, db, { logger: pino({ level: 'info' }, sink) });
    const api = client(app);
    const ok = await api.get('/api/v1/ingest/ping', { key: tenant.key });
    const bad = await api.get('/api/v1/ingest/ping', { key: tenant.key.slice(0, -1) + 'x' });
    assert.equal(ok.status, 200);
    assert.equal(bad.status, 401);

    const entries = lines.map((line) => JSON.parse(line));
    for (const res of [ok, bad]) {
      assert.ok(entries.some((e) => e.req?.id === res.headers['x-request-id'] && e.res?.statusCode === res.status));
    }
    const everything = lines.join('\n');
    assert.ok(!everything.includes(tenant.key), 'the key is never logged');
    assert.ok(!everything.includes(tenant.key.slice(9, 30)), 'no part of the secret is logged');
  });
});

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import selfsigned from 'selfsigned';
import request from 'supertest';
import { createApp } from '../src/app';
import { createHttpServer, reloadCertificate } from '../src/http/http-server';
import { client } from './support/client';
import { freshDatabaseConfig } from './support/database';
import { event } from './support/events';
import { databaseUrlOf, setup, silentLogger } from './support/fixtures';
import { startServer } from './support/server-process';

interface Pem {
  cert: string;
  key: string;
  fingerprint: string;
}

async function certificate(commonName: string): Promise<Pem> {
  const pems = await selfsigned.generate([{ name: 'commonName', value: commonName }], { keyType: 'ec', algorithm: 'sha256' });
  return { cert: pems.cert, key: pems.private, fingerprint: new X509Certificate(pems.cert).fingerprint256 };
}

function writePem(dir: string, pem: Pem): { certFile: string; keyFile: string } {
  const files = { certFile: path.join(dir, 'cert.pem'), keyFile: path.join(dir, 'key.pem') };
  writeFileSync(files.certFile, pem.cert);
  writeFileSync(files.keyFile, pem.key);
  return files;
}

/** GET over a new TLS connection; the fingerprint of the certificate the server presented. */
function httpsGet(port: number, urlPath: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string; fingerprint: string }>((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, path: urlPath, headers, rejectUnauthorized: false, agent: false }, (res) => {
      const fingerprint = (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      let body = '';
      res.on('data', (chunk) => (body += String(chunk)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint }));
    });
    req.on('error', reject);
  });
}

describe('TLS, REQUIRE_TLS and TRUST_PROXY', () => {
  let first: Pem;
  let second: Pem;

  before(async function () {
    this.timeout(30_000);
    [first, second] = await Promise.all([certificate('first.test'), certificate('second.test')]);
    assert.notEqual(first.fingerprint, second.fingerprint);
  });

  it('serves HTTPS with TLS_CERT_FILE and TLS_KEY_FILE, and a reload serves the renewed certificate', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ingest-tls-'));
    const files = writePem(dir, first);
    const { db, config, tenant } = await setup({ TLS_CERT_FILE: files.certFile, TLS_KEY_FILE: files.keyFile, REQUIRE_TLS: 'true' });
    const server = createHttpServer(createApp(config, db, { logger: silentLogger }), config, silentLogger) as https.Server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const ping = await httpsGet(port, '/api/v1/ingest/ping', { Authorization: `Bearer ${tenant.key}` });
      assert.equal(ping.status, 200, 'REQUIRE_TLS lets an HTTPS request through');
      assert.equal(ping.fingerprint, first.fingerprint);

      writePem(dir, second);
      reloadCertificate(server, files);
      assert.equal((await httpsGet(port, '/healthz')).fingerprint, second.fingerprint);

      writeFileSync(files.certFile, 'not a certificate');
      assert.throws(() => reloadCertificate(server, files));
      assert.equal((await httpsGet(port, '/healthz')).fingerprint, second.fingerprint, 'a bad renewal leaves the current certificate');
    } finally {
      server.close();
    }
  });

  it('reloads the certificate on SIGHUP in the server process', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ingest-tls-'));
    const files = writePem(dir, first);
    const { child, port, exited } = await startServer({
      DATABASE_URL: databaseUrlOf(await freshDatabaseConfig()),
      TLS_CERT_FILE: files.certFile,
      TLS_KEY_FILE: files.keyFile,
    });
    try {
      assert.equal((await httpsGet(port, '/healthz')).fingerprint, first.fingerprint);
      writePem(dir, second);
      child.kill('SIGHUP');
      let served = first.fingerprint;
      for (let i = 0; i < 50 && served !== second.fingerprint; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        served = (await httpsGet(port, '/healthz')).fingerprint;
      }
      assert.equal(served, second.fingerprint);
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });

  it('refuses plain-HTTP API requests with 400 tls_required under REQUIRE_TLS, before reading them', async () => {
    const { app, tenant } = await setup({ REQUIRE_TLS: 'true' });
    const api = client(app);
    const ping = await api.get('/api/v1/ingest/ping', { key: tenant.key });
    assert.equal(ping.status, 400);
    assert.equal(ping.body.error.code, 'tls_required');
    const events = await api.post('/api/v1/ingest/events', { key: tenant.key, body: { events: [event()] } });
    assert.equal(events.status, 400);
    assert.equal(events.body.error.code, 'tls_required');
    assert.equal((await request(app).get('/healthz')).status, 200, 'outside /api/ plain HTTP is fine (probes)');

    const { app: open } = await setup();
    assert.equal(
      (await client(open).get('/api/v1/ingest/ping', { key: tenant.key })).status,
      200,
      'without REQUIRE_TLS plain HTTP is served',
    );
  });

  function loggingApp(env: Record<string, string>) {
    return setup(env).then(({ db, config, tenant }) => {
      const lines: Array<{ req?: { ip?: string; protocol?: string } }> = [];
      const sink = new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).trim().split('\n')) lines.push(JSON.parse(line));
          done();
        },
      });
      return { app: createApp(config, db, { logger: pino({ level: 'info' }, sink) }), tenant, lines };
    });
  }
  const forwarded = { 'X-Forwarded-For': '203.0.113.7', 'X-Forwarded-Proto': 'https' };

  it('takes the client address and protocol from the proxy headers with TRUST_PROXY', async () => {
    const { app, tenant, lines } = await loggingApp({ TRUST_PROXY: 'loopback', REQUIRE_TLS: 'true' });
    const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key, headers: forwarded });
    assert.equal(res.status, 200, 'the proxy terminated TLS: req.secure');
    assert.equal(lines.at(-1)?.req?.ip, '203.0.113.7');
    assert.equal(lines.at(-1)?.req?.protocol, 'https');
    const refused = await client(app).get('/api/v1/ingest/ping', { key: tenant.key, headers: { 'X-Forwarded-Proto': 'http' } });
    assert.equal(refused.body.error.code, 'tls_required', 'the proxy received plain HTTP');
    assert.match(
      (await client(app).get('/api/v1/ingest/ping', { key: 'svc_live_x', headers: forwarded })).body.error.docsUrl,
      /^https:\/\//,
    );
  });

  it('ignores the proxy headers without TRUST_PROXY, and from a proxy it does not trust', async () => {
    const settings: Array<Record<string, string>> = [{}, { TRUST_PROXY: '10.0.0.0/8' }];
    for (const env of settings) {
      const { app, tenant, lines } = await loggingApp({ ...env, REQUIRE_TLS: 'true' });
      const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key, headers: forwarded });
      assert.equal(res.body.error.code, 'tls_required', 'a client cannot claim HTTPS by a header');
      const logged = lines.at(-1)?.req;
      assert.match(String(logged?.ip), /127\.0\.0\.1$/);
      assert.equal(logged?.protocol, 'http');
    }
  });
});

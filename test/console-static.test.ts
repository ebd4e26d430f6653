import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../src/app';
import { sharedDatabase } from './support/database';
import { silentLogger, testConfig } from './support/fixtures';

/** A stand-in for Vite's output: an index.html, a hashed asset and a public file. */
function fakeBuild(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'console-build-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><script type="module" src="/console/assets/index-abc123.js"></script>');
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

describe('The web console is served at /console/', () => {
  async function appWith(consoleDir: string) {
    const { db, config } = await sharedDatabase();
    return createApp(testConfig({ config }), db, { logger: silentLogger, consoleDir });
  }

  it('redirects / and /console there', async () => {
    const app = await appWith(fakeBuild());
    for (const from of ['/', '/console']) {
      const res = await request(app).get(from);
      assert.equal(res.status, 302);
      assert.equal(res.headers.location, '/console/');
    }
  });

  it('answers the HTML, never cached, for the console and any deep link under it, with a strict CSP', async () => {
    const app = await appWith(fakeBuild());
    for (const page of ['/console/', '/console/workers/wrk_1', '/console/settings/keys?app=x']) {
      const res = await request(app).get(page);
      assert.equal(res.status, 200, page);
      assert.match(res.headers['content-type'], /^text\/html/);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(res.text, /index-abc123\.js/);
      const csp = res.headers['content-security-policy'];
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /style-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline/);
    }
  });

  it('serves hashed assets cached for a year, and a missing one as 404, not as the HTML', async () => {
    const app = await appWith(fakeBuild());
    const asset = await request(app).get('/console/assets/index-abc123.js');
    assert.equal(asset.status, 200);
    assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
    const gone = await request(app).get('/console/assets/index-old999.js');
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, 'not_found');
  });

  it('serves public files uncached', async () => {
    const res = await request(await appWith(fakeBuild())).get('/console/favicon.svg');
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  it('says the console is not built when it is not', async () => {
    const res = await request(await appWith(path.join(os.tmpdir(), 'no-such-console-build'))).get('/console/');
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'service_unavailable');
    assert.match(res.body.error.message, /make build/);
  });
});

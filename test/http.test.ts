import assert from 'node:assert/strict';
import request, { type Response } from 'supertest';
import { errorCodes } from '../src/errors';
import { sourceDocument } from '../src/contract/document-source';
import { client } from './support/client';
import { signIn } from './support/console';
import { setup } from './support/fixtures';

describe('HTTP conventions', () => {
  it('answers a CORS preflight on ingest endpoints without authentication', async () => {
    const { app } = await setup();
    const res = await request(app)
      .options('/api/v1/ingest/events')
      .set('Origin', 'https://tools.example.com')
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization,content-type,idempotency-key');
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    assert.equal(res.headers['access-control-allow-headers'], 'Authorization,Content-Type,Idempotency-Key');
    assert.ok(res.headers['x-request-id']);
  });

  it('exposes the documented headers to browsers on ingest responses', async () => {
    const { app, tenant } = await setup();
    const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key, headers: { Origin: 'https://tools.example.com' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    for (const header of [
      'X-Request-Id',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'RateLimit-Policy',
      'RateLimit',
      'Retry-After',
      'X-API-Version',
    ]) {
      assert.ok(res.headers['access-control-expose-headers'].split(',').includes(header), header);
    }
  });

  it('answers an unknown endpoint with 404 not_found and a wrong method with 405 method_not_allowed', async () => {
    const { app, tenant } = await setup();
    const api = client(app);
    assert.deepEqual(errorOf(await api.get('/api/v1/ingest/nothing-here', { key: tenant.key })), [404, 'not_found']);
    const wrongMethod = await api.delete('/api/v1/ingest/ping', { key: tenant.key });
    assert.deepEqual(errorOf(wrongMethod), [405, 'method_not_allowed']);
    assert.equal(wrongMethod.headers.allow, 'GET');
    assert.deepEqual(errorOf(await api.get('/nowhere')), [404, 'not_found']);
  });

  it("enforces the contract on the console's paths as on the ingest endpoints: 404, 405 and a bad query", async () => {
    const { app, db, tenant } = await setup();
    const { console: api } = await signIn(app, db, { orgId: tenant.orgId });
    assert.deepEqual(errorOf(await api.get('/api/v1/console/nothing-here')), [404, 'not_found']);
    const wrongMethod = await api.delete('/api/v1/console/me');
    assert.deepEqual(errorOf(wrongMethod), [405, 'method_not_allowed']);
    assert.equal(wrongMethod.headers.allow, 'GET');
    assert.deepEqual(errorOf(await api.get('/api/v1/console/workers?limit=0')), [400, 'invalid_query']);
    // A path beside the console's is the ingest side's: its key, then its contract.
    assert.deepEqual(errorOf(await client(app).get('/api/v1/consoles', { key: tenant.key })), [404, 'not_found']);
  });

  it('sends helmet security headers', async () => {
    const { app } = await setup();
    const res = await request(app).get('/healthz');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-powered-by'], undefined);
  });

  it('maps every error code of the contract, and only those, in one table', () => {
    const codes = sourceDocument().components.schemas.ErrorCode.enum as string[];
    assert.deepEqual(errorCodes().sort(), [...codes].sort());
    for (const code of codes) {
      const anchor = sourceDocument().info.description as string;
      assert.ok(anchor.includes(`### ${code}\n`), `the API reference documents ${code}, the target of its docsUrl`);
    }
  });

  it('answers GET /healthz', async () => {
    const { app } = await setup();
    const res = await request(app).get('/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ok: true });
  });
});

/** A response's status and the contract's error code in its body. */
function errorOf(res: Response): [number, unknown] {
  return [res.status, res.body.error?.code];
}

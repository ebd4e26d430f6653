import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { issueKey } from '../src/domain/administration';
import { RedisRateLimitStore } from '../src/domain/rate-limit/redis-store';
import { client } from './support/client';
import { setup, silentLogger } from './support/fixtures';
import { assertRateLimited, spendKeyBudget } from './support/rate-limit';
import { TcpProxy } from './support/tcp-proxy';

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const limits = { RATE_LIMIT_PER_KEY: '3', RATE_LIMIT_PER_ORG: '5' };

/** A Redis store in a key space of its own, so that runs and tests never share windows. */
function isolatedStore(): RedisRateLimitStore {
  return new RedisRateLimitStore(redisUrl, silentLogger, `test:${randomUUID()}:`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Rate limits on Redis (needs TEST_REDIS=1 and Redis at TEST_REDIS_URL; skipped otherwise)', function () {
  before(function () {
    if (!process.env.TEST_REDIS) this.skip();
  });

  it('admits exactly RATE_LIMIT_PER_KEY requests per second, then 429, and admits again once the window has slid', async () => {
    const { app, tenant } = await setup(limits, {}, { rateLimitStore: isolatedStore() });
    const refused = await spendKeyBudget(app, tenant.key, 3, 5);
    assert.equal(refused.headers['retry-after'], '1');
    await sleep(1000);
    const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key });
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-ratelimit-remaining'], '2', 'the refused request was not counted');
  });

  it('limits the organization across its keys', async () => {
    const { app, db, tenant } = await setup(limits, {}, { rateLimitStore: isolatedStore() });
    const api = client(app);
    const second = await issueKey(db, tenant.appId);
    for (let i = 0; i < 3; i++) assert.equal((await api.get('/api/v1/ingest/ping', { key: tenant.key })).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await api.get('/api/v1/ingest/ping', { key: second.key })).status, 200);
    const refused = await api.get('/api/v1/ingest/ping', { key: second.key });
    assertRateLimited(refused, 'its organization');
    assert.equal(refused.headers.ratelimit, '"key";r=1;t=1, "org";r=0;t=1');
  });

  it('shares the limits between two instances configured with the same REDIS_URL', async () => {
    const env = { ...limits, REDIS_URL: redisUrl };
    const first = await setup(env);
    const second = await setup(env); // same database: the first tenant's key works on both
    const instances = [client(first.app), client(second.app)];
    for (let i = 0; i < 3; i++) {
      const res = await instances[i % 2]!.get('/api/v1/ingest/ping', { key: first.tenant.key });
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-ratelimit-remaining'], String(2 - i));
    }
    assertRateLimited(await instances[1]!.get('/api/v1/ingest/ping', { key: first.tenant.key }), 'this key');
    assertRateLimited(await instances[0]!.get('/api/v1/ingest/ping', { key: first.tenant.key }), 'this key');
  });

  it('lets its Redis keys expire with the window', async () => {
    const prefix = `test:${randomUUID()}:`;
    const store = new RedisRateLimitStore(redisUrl, silentLogger, prefix);
    const redis = new Redis(redisUrl);
    try {
      await store.hit({ keyId: 'key_a', orgId: 'org_a' }, { perKey: 3, perOrg: 5, windowMs: 1000 });
      const keys = (await redis.keys(`${prefix}*`)).sort();
      assert.deepEqual(keys, [`${prefix}{org_a}:key:key_a`, `${prefix}{org_a}:org`]);
      for (const key of keys) {
        const ttl = await redis.pttl(key);
        assert.ok(ttl > 0 && ttl <= 1000, `${key} expires within the window (${ttl} ms)`);
      }
    } finally {
      await store.close();
      redis.disconnect();
    }
  });

  it('answers 503 service_unavailable with Retry-After, fast, while Redis is unreachable, and keeps running', async () => {
    const { app, tenant } = await setup({ ...limits, REDIS_URL: 'redis://127.0.0.1:1' });
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key });
      assert.ok(Date.now() - started < 1000, `answered in ${Date.now() - started} ms`);
      assert.equal(res.status, 503);
      assert.equal(res.body.error.code, 'service_unavailable');
      assert.equal(res.headers['retry-after'], '1');
    }
  });

  it('answers 503 while the connection to Redis is cut, and recovers by itself once it is back', async function () {
    this.timeout(15_000);
    const target = new URL(redisUrl);
    const proxy = new TcpProxy({ host: target.hostname, port: Number(target.port) || 6379 });
    await proxy.open();
    try {
      const { app, tenant } = await setup({
        RATE_LIMIT_PER_KEY: '100',
        RATE_LIMIT_PER_ORG: '100',
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      });
      const api = client(app);
      const ping = () => api.get('/api/v1/ingest/ping', { key: tenant.key });
      assert.equal((await ping()).status, 200);

      await proxy.close();
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const res = await ping();
        assert.equal(res.status, 503);
        assert.equal(res.body.error.code, 'service_unavailable');
        assert.ok(Date.now() - started < 1000, `answered in ${Date.now() - started} ms`);
      }

      await proxy.open();
      let res = await ping();
      for (const deadline = Date.now() + 5000; res.status === 503 && Date.now() < deadline; res = await ping()) await sleep(100);
      assert.equal(res.status, 200, 'admitted again without recreating the app');
      assert.equal(res.headers['x-ratelimit-remaining'], '98', 'the refusals while Redis was away were not counted');
    } finally {
      await proxy.close();
    }
  });
});

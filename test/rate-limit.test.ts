import assert from 'node:assert/strict';
import { issueKey } from '../src/domain/administration';
import { MemoryRateLimitStore } from '../src/domain/rate-limit/memory-store';
import { RateLimitStoreUnavailable, type RateLimitStore } from '../src/domain/rate-limit/store';
import { client } from './support/client';
import { createTenant, setup } from './support/fixtures';
import { assertRateLimited, spendKeyBudget } from './support/rate-limit';

const limits = { RATE_LIMIT_PER_KEY: '3', RATE_LIMIT_PER_ORG: '5' };

/** An app whose in-memory store runs on a clock the test moves. */
async function onFakeClock(env: Record<string, string> = limits) {
  const clock = { now: 1_000_000 };
  const context = await setup(env, {}, { rateLimitStore: new MemoryRateLimitStore(() => clock.now) });
  return { ...context, clock, api: client(context.app) };
}

describe('Rate limits (in-memory store)', () => {
  it('admits exactly RATE_LIMIT_PER_KEY requests per second, counting X-RateLimit-Remaining down, then answers 429', async () => {
    const { app, tenant } = await onFakeClock();
    const refused = await spendKeyBudget(app, tenant.key, 3, 5);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers.ratelimit, '"key";r=0;t=1, "org";r=2;t=1');
  });

  it('slides: quota comes back exactly as each admitted request leaves the window, and refused ones never count', async () => {
    const { api, clock, tenant } = await onFakeClock();
    const ping = () => api.get('/api/v1/ingest/ping', { key: tenant.key });
    const start = clock.now;
    assert.equal((await ping()).status, 200); // at 0 ms
    clock.now = start + 400;
    assert.equal((await ping()).status, 200); // at 400 ms
    assert.equal((await ping()).status, 200); // at 400 ms
    clock.now = start + 999;
    for (let i = 0; i < 5; i++) assertRateLimited(await ping(), 'this key');
    clock.now = start + 1000; // the request at 0 ms has left; the five refusals left no trace
    const admitted = await ping();
    assert.equal(admitted.status, 200);
    assert.equal(admitted.headers['x-ratelimit-remaining'], '0');
    assert.equal(admitted.headers.ratelimit, '"key";r=0;t=1, "org";r=2;t=1', 'the next quota frees at 1400 ms: in 400 ms, 1 s rounded up');
    assertRateLimited(await ping(), 'this key');
    clock.now = start + 1400; // both requests of 400 ms have left
    assert.equal((await ping()).headers['x-ratelimit-remaining'], '1');
  });

  it('bases Retry-After on the oldest counted request, in whole seconds of at least 1', async () => {
    const { api, clock, tenant } = await onFakeClock({ RATE_LIMIT_PER_KEY: '1', RATE_LIMIT_PER_ORG: '5' });
    const ping = () => api.get('/api/v1/ingest/ping', { key: tenant.key });
    const start = clock.now;
    assert.equal((await ping()).status, 200);
    clock.now = start + 999.5;
    const refused = await ping();
    assertRateLimited(refused, 'this key');
    assert.equal(refused.headers['retry-after'], '1', 'half a millisecond still rounds up to one second');
    assert.equal(refused.headers.ratelimit, '"key";r=0;t=1, "org";r=4;t=1');
  });

  it('limits the organization across its keys, while the second key still has budget of its own', async () => {
    const { api, db, tenant } = await onFakeClock();
    const second = await issueKey(db, tenant.appId);
    for (let i = 0; i < 3; i++) assert.equal((await api.get('/api/v1/ingest/ping', { key: tenant.key })).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await api.get('/api/v1/ingest/ping', { key: second.key })).status, 200);
    const refused = await api.get('/api/v1/ingest/ping', { key: second.key });
    assertRateLimited(refused, 'its organization');
    assert.ok(!refused.body.error.message.includes('this key'));
    assert.equal(refused.headers['x-ratelimit-remaining'], '1', 'X-RateLimit-Remaining is the key’s own window');
    assert.equal(refused.headers.ratelimit, '"key";r=1;t=1, "org";r=0;t=1');
  });

  it('names both limits when both are full', async () => {
    const { api, tenant } = await onFakeClock({ RATE_LIMIT_PER_KEY: '2', RATE_LIMIT_PER_ORG: '2' });
    for (let i = 0; i < 2; i++) await api.get('/api/v1/ingest/ping', { key: tenant.key });
    const refused = await api.get('/api/v1/ingest/ping', { key: tenant.key });
    assertRateLimited(refused, 'this key');
    assert.ok(refused.body.error.message.includes('its organization'));
  });

  it("never lets one organization's traffic limit another's", async () => {
    const { api, db, tenant, app } = await onFakeClock();
    await spendKeyBudget(app, tenant.key, 3, 5);
    const second = await issueKey(db, tenant.appId);
    for (let i = 0; i < 2; i++) await api.get('/api/v1/ingest/ping', { key: second.key });
    assertRateLimited(await api.get('/api/v1/ingest/ping', { key: second.key }), 'its organization');

    const other = await createTenant(db);
    const res = await api.get('/api/v1/ingest/ping', { key: other.key });
    assert.equal(res.status, 200);
    assert.equal(res.headers.ratelimit, '"key";r=2;t=1, "org";r=4;t=1');
  });

  it('sends the rate-limit headers on every /api/v1 answer after authentication: 200, 400, 404, 405, 429', async () => {
    const { api, tenant } = await onFakeClock({ RATE_LIMIT_PER_KEY: '5', RATE_LIMIT_PER_ORG: '10' });
    const answers = [
      await api.get('/api/v1/ingest/ping', { key: tenant.key }),
      await api.post('/api/v1/ingest/events', { key: tenant.key, headers: { 'Content-Type': 'application/json' }, body: '{"events": [' }),
      await api.get('/api/v1/ingest/nothing-here', { key: tenant.key }),
      await api.delete('/api/v1/ingest/ping', { key: tenant.key }),
      await api.get('/api/v1/ingest/ping', { key: tenant.key }),
      await api.get('/api/v1/ingest/ping', { key: tenant.key }),
    ];
    assert.deepEqual(
      answers.map((res) => res.status),
      [200, 400, 404, 405, 200, 429],
    );
    answers.forEach((res, i) => {
      assert.equal(res.headers['x-ratelimit-limit'], '5');
      assert.equal(res.headers['x-ratelimit-remaining'], String(Math.max(0, 4 - i)));
      assert.equal(res.headers['ratelimit-policy'], '"key";q=5;w=1, "org";q=10;w=1');
      assert.equal(res.headers.ratelimit, `"key";r=${Math.max(0, 4 - i)};t=1, "org";r=${9 - Math.min(i, 4)};t=1`);
    });
  });

  it('limits the statistics endpoints from the same budget', async () => {
    const { api, tenant } = await onFakeClock({ RATE_LIMIT_PER_KEY: '2', RATE_LIMIT_PER_ORG: '10' });
    for (let i = 0; i < 2; i++) await api.get('/api/v1/ingest/ping', { key: tenant.key });
    assertRateLimited(await api.get('/api/v1/apps/statistics', { key: tenant.key }), 'this key');
    assertRateLimited(await api.put('/api/v1/apps/statistics', { key: tenant.key, body: { statistics: [] } }), 'this key');
  });

  it('checks authentication and the plan before the rate limits, and counts neither failure', async () => {
    const { api, tenant } = await onFakeClock({ RATE_LIMIT_PER_KEY: '1', RATE_LIMIT_PER_ORG: '10' });
    for (let i = 0; i < 3; i++) {
      const res = await api.get('/api/v1/ingest/ping', { headers: { Authorization: `Bearer svc_live_${'A'.repeat(43)}` } });
      assert.equal(res.status, 401);
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
    }
    assert.equal((await api.get('/api/v1/ingest/ping', { key: tenant.key })).status, 200);
  });

  it('answers 503 service_unavailable with Retry-After when the store cannot be reached', async () => {
    const unreachable: RateLimitStore = {
      hit: async () => {
        throw new RateLimitStoreUnavailable('connection refused');
      },
      close: async () => {},
    };
    const { app, tenant } = await setup(limits, {}, { rateLimitStore: unreachable });
    const res = await client(app).get('/api/v1/ingest/ping', { key: tenant.key });
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'service_unavailable');
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers['x-ratelimit-limit'], undefined);
  });
});

describe('MemoryRateLimitStore', () => {
  const limits = { perKey: 2, perOrg: 4, windowMs: 1000 };

  it('drops the windows of keys and organizations idle for a whole window', async () => {
    let now = 0;
    const store = new MemoryRateLimitStore(() => now);
    // Reaching into the private map: its size is the memory bound under test.
    const held = () => (store as unknown as { logs: Map<string, number[]> }).logs.size;
    for (let i = 0; i < 100; i++) await store.hit({ keyId: `key_${i}`, orgId: `org_${i % 10}` }, limits);
    assert.equal(held(), 110);
    now = 1000;
    await store.hit({ keyId: 'key_new', orgId: 'org_new' }, limits);
    assert.equal(held(), 2, 'only the windows active in the last second remain');
  });

  it('records a refused request nowhere', async () => {
    let now = 0;
    const store = new MemoryRateLimitStore(() => now);
    const subject = { keyId: 'key_a', orgId: 'org_a' };
    await store.hit(subject, limits);
    await store.hit(subject, limits);
    const refused = await store.hit(subject, limits);
    assert.deepEqual(refused, { allowed: false, key: { count: 2, freesInMs: 1000 }, org: { count: 2, freesInMs: 1000 } });
    now = 1000;
    assert.deepEqual(await store.hit(subject, limits), {
      allowed: true,
      key: { count: 1, freesInMs: 1000 },
      org: { count: 1, freesInMs: 1000 },
    });
  });
});

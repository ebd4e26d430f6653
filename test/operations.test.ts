import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp } from '../src/app';
import { migrate, openDatabase, type Db } from '../src/data/db';
import { createMetricsServer } from '../src/http/metrics';
import { createServices } from '../src/services';
import { client } from './support/client';
import { freshDatabaseConfig, testDialect } from './support/database';
import { event } from './support/events';
import { setup, silentLogger, testConfig } from './support/fixtures';
import { parseMetrics, valueOf, type Sample } from './support/prometheus';
import { TcpProxy } from './support/tcp-proxy';

const TOKEN = 'test-metrics-token-0123456789';
const EVENTS = '/api/v1/ingest/events';

describe(`Operations: /metrics, /healthz and /readyz (${testDialect})`, () => {
  async function scrape(app: Parameters<typeof request>[0]): Promise<Sample[]> {
    const res = await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parseMetrics(res.text);
  }

  it('counts real traffic by route pattern, status and code, with process and database figures', async function () {
    this.timeout(30_000);
    const { app, tenant } = await setup({ METRICS_TOKEN: TOKEN });
    const api = client(app);
    const before = await scrape(app);

    const mixed = await api.post(EVENTS, {
      key: tenant.key,
      body: { events: [event(), event({ eventType: 'not.allowed' }), event(), event({ category: 'NOPE' })] },
    });
    assert.equal(mixed.status, 207);
    const replayed = { key: tenant.key, headers: { 'Idempotency-Key': `m-${tenant.keyId}` }, body: { events: [event()] } };
    assert.equal((await api.post(EVENTS, replayed)).status, 202);
    assert.equal((await api.post(EVENTS, replayed)).headers['idempotent-replayed'], 'true');
    const snapshot = { snapshotType: 'queue.depth', actor: { externalId: 'm-1' }, metrics: { open: 3 } };
    assert.equal((await api.post('/api/v1/ingest/snapshots', { key: tenant.key, body: snapshot })).status, 202);
    assert.equal((await api.get('/api/v1/ingest/ping', { key: 'svc_live_wrong' })).status, 401);
    assert.equal((await api.get(`/api/v1/ingest/scanner-${tenant.orgId}`, { key: tenant.key })).status, 404);

    const after = await scrape(app);
    const moved = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    assert.equal(moved('ingest_events_accepted_total'), 3);
    assert.equal(moved('ingest_events_rejected_total', { code: 'forbidden_event_type' }), 1);
    assert.equal(moved('ingest_events_rejected_total', { code: 'invalid_body' }), 1);
    assert.equal(moved('ingest_batch_size_events_count'), 2, 'the replay never reached the handler');
    assert.equal(moved('ingest_batch_size_events_sum'), 5);
    assert.equal(moved('ingest_idempotent_replays_total'), 1);
    assert.equal(moved('ingest_snapshots_accepted_total'), 1);
    assert.equal(moved('ingest_http_requests_total', { method: 'POST', route: EVENTS, status: '207' }), 1);
    assert.equal(moved('ingest_http_requests_total', { method: 'POST', route: EVENTS, status: '202' }), 2);
    assert.equal(moved('ingest_http_requests_total', { method: 'GET', route: '/api/v1/ingest/ping', status: '401' }), 1);
    assert.equal(moved('ingest_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
    assert.equal(moved('ingest_http_request_duration_seconds_count', { method: 'POST', route: EVENTS }), 3);
    assert.ok(moved('ingest_db_query_duration_seconds_count', { outcome: 'ok' }) > 0, 'queries are timed');
    assert.ok(valueOf(after, 'process_cpu_user_seconds_total') > 0, "Node's default process metrics");
    assert.ok(valueOf(after, 'nodejs_heap_size_used_bytes') > 0);
    if (testDialect === 'postgres') assert.ok(valueOf(after, 'ingest_db_pool_connections', { state: 'total' }) > 0);

    const unbounded = [tenant.orgId, tenant.appId, tenant.keyId, tenant.key, 'scanner-', 'queue.depth', 'm-1'];
    for (const sample of after) {
      for (const value of Object.values(sample.labels)) {
        for (const secret of unbounded) assert.ok(!value.includes(secret), `${sample.name} is labelled with ${value}`);
      }
    }
  });

  it('counts rate-limit and quota refusals', async () => {
    const { app: limited, tenant } = await setup({ METRICS_TOKEN: TOKEN, RATE_LIMIT_PER_KEY: '1' });
    const before = await scrape(limited);
    await request(limited).get('/api/v1/ingest/ping').set('Authorization', `Bearer ${tenant.key}`);
    assert.equal((await request(limited).get('/api/v1/ingest/ping').set('Authorization', `Bearer ${tenant.key}`)).status, 429);
    const { app: capped, tenant: small } = await setup({ METRICS_TOKEN: TOKEN }, { maxEventsPerMonth: 1 });
    await client(capped).post(EVENTS, { key: small.key, body: { events: [event()] } });
    assert.equal((await client(capped).post(EVENTS, { key: small.key, body: { events: [event()] } })).status, 402);
    const after = await scrape(limited);
    assert.equal(
      valueOf(after, 'ingest_rate_limited_total', { window: 'key' }) - valueOf(before, 'ingest_rate_limited_total', { window: 'key' }),
      1,
    );
    assert.equal(valueOf(after, 'ingest_quota_refusals_total') - valueOf(before, 'ingest_quota_refusals_total'), 1);
  });

  it('serves /metrics on the public port only with METRICS_TOKEN, and only to a request bearing it', async () => {
    const { app: closed } = await setup();
    assert.equal((await client(closed).get('/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } })).status, 404);

    const { app } = await setup({ METRICS_TOKEN: TOKEN });
    const api = client(app);
    const missing = await api.get('/metrics');
    assert.equal(missing.status, 401);
    assert.equal(missing.body.error.code, 'missing_authorization');
    for (const wrong of ['Bearer wrong-token', `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`]) {
      const res = await api.get('/metrics', { headers: { Authorization: wrong } });
      assert.equal(res.status, 401, wrong);
      assert.equal(res.body.error.code, 'invalid_key');
    }
    assert.equal((await scrape(app)).length > 0, true);
  });

  it('serves /metrics without a token on METRICS_PORT, and nothing else there', async () => {
    const server = createMetricsServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const metrics = await fetch(`${url}/metrics`);
      assert.equal(metrics.status, 200);
      assert.ok(parseMetrics(await metrics.text()).some((s) => s.name === 'ingest_http_requests_total'));
      const other = await fetch(`${url}/api/v1/ingest/ping`);
      assert.equal(other.status, 404);
      assert.equal(((await other.json()) as { error: { code: string } }).error.code, 'not_found');
    } finally {
      server.close();
    }
  });

  it('keeps /healthz (alive) apart from /readyz (migrations applied, Redis answering)', async () => {
    const { app } = await setup();
    assert.equal((await request(app).get('/readyz')).status, 200);

    const unmigrated = openDatabase(await freshDatabaseConfig());
    try {
      const config = testConfig({ config: { kind: 'sqlite', path: ':memory:' } });
      const bareApp = createApp(config, unmigrated, {
        logger: silentLogger,
        services: createServices(config, unmigrated, { logger: silentLogger }),
      });
      const bare = client(bareApp);
      assert.equal((await request(bareApp).get('/healthz')).status, 200);
      const notReady = await bare.get('/readyz');
      assert.equal(notReady.status, 503);
      assert.match(notReady.body.error.message, /migrations not applied: 001_initial/);
    } finally {
      await unmigrated.close();
    }

    const { app: noRedis } = await setup({ REDIS_URL: 'redis://127.0.0.1:1' });
    assert.equal((await request(noRedis).get('/healthz')).status, 200);
    const redisDown = await client(noRedis).get('/readyz');
    assert.equal(redisDown.status, 503);
    assert.match(redisDown.body.error.message, /Redis/);
  });

  describe('with the database cut off', () => {
    let proxy: TcpProxy;
    let viaProxy: Db;

    before(async function () {
      if (testDialect !== 'postgres') this.skip();
      const config = await freshDatabaseConfig();
      if (config.kind !== 'postgres') return;
      const url = new URL(config.url);
      proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
      await proxy.open();
      url.port = String(proxy.port);
      viaProxy = openDatabase({ kind: 'postgres', url: url.toString() });
      await migrate(viaProxy);
    });

    after(async () => {
      await viaProxy?.close().catch(() => {});
      await proxy?.close();
    });

    it('answers /healthz 200 and /readyz 503 naming the database, and is ready again once it is back', async function () {
      this.timeout(30_000);
      const config = testConfig({ config: { kind: 'postgres', url: 'postgres://unused' } });
      const services = createServices(config, viaProxy, { logger: silentLogger });
      const app = createApp(config, viaProxy, { logger: silentLogger, services });
      const api = client(app);
      try {
        assert.equal((await request(app).get('/readyz')).status, 200);
        await proxy.close();
        assert.equal((await request(app).get('/healthz')).status, 200);
        const down = await api.get('/readyz');
        assert.equal(down.status, 503);
        assert.match(down.body.error.message, /database is unreachable/);
        await proxy.open();
        let status = 0;
        for (let i = 0; i < 50 && status !== 200; i++) {
          status = (await request(app).get('/readyz')).status;
          if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        assert.equal(status, 200);
      } finally {
        await services.close();
      }
    });
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config';

describe('Configuration', () => {
  it('has the defaults the README documents', () => {
    const config = loadConfig({});
    assert.deepEqual(
      { ...config, redisUrl: config.redisUrl ?? null },
      {
        port: 3000,
        database: { kind: 'sqlite', path: './data/ingest.db' },
        eventCategorySet: 'B',
        ingestBatchLimit: 500,
        authCacheTtlSeconds: 30,
        rateLimitPerKey: 60,
        rateLimitPerOrg: 600,
        idempotencyTtlSeconds: 600,
        redisUrl: null,
        logLevel: 'info',
        requestTimeoutSeconds: 30,
        headersTimeoutSeconds: 10,
        metricsPort: undefined,
        metricsToken: undefined,
        tls: undefined,
        trustProxy: false,
        requireTls: false,
        eventRetentionDays: undefined,
        rollupRetentionDays: undefined,
        sessionIdleMinutes: 720,
        publicUrl: 'http://localhost:3000',
        heapGrowingPercent: 50,
      },
    );
  });

  it('lets the heap grow further on PostgreSQL, where collecting often costs the busy HTTP thread', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@db:5432/ingest' }).heapGrowingPercent, 200);
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.db' }).heapGrowingPercent, 50);
  });

  it('parses every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/ingest',
      EVENT_CATEGORY_SET: 'A',
      INGEST_BATCH_LIMIT: '100',
      AUTH_CACHE_TTL_SECONDS: '60',
      RATE_LIMIT_PER_KEY: '10',
      RATE_LIMIT_PER_ORG: '20',
      IDEMPOTENCY_TTL_SECONDS: '30',
      REDIS_URL: 'redis://127.0.0.1:6379',
      REQUEST_TIMEOUT_SECONDS: '120',
      HEADERS_TIMEOUT_SECONDS: '5',
      METRICS_PORT: '9464',
      METRICS_TOKEN: 'a-long-enough-metrics-token',
      TLS_CERT_FILE: __filename,
      TLS_KEY_FILE: __filename,
      TRUST_PROXY: 'loopback, 10.0.0.0/8',
      REQUIRE_TLS: 'true',
      EVENT_RETENTION_DAYS: '60',
      ROLLUP_RETENTION_DAYS: '730',
      SESSION_IDLE_MINUTES: '60',
      PUBLIC_URL: 'https://ingest.example.com/',
      HEAP_GROWING_PERCENT: '0',
    });
    assert.deepEqual(config.database, { kind: 'postgres', url: 'postgres://u@db:5432/ingest' });
    assert.equal(config.eventCategorySet, 'A');
    assert.equal(config.ingestBatchLimit, 100);
    assert.equal(config.authCacheTtlSeconds, 60);
    assert.equal(config.rateLimitPerKey, 10);
    assert.equal(config.rateLimitPerOrg, 20);
    assert.equal(config.idempotencyTtlSeconds, 30);
    assert.equal(config.redisUrl, 'redis://127.0.0.1:6379');
    assert.equal(config.requestTimeoutSeconds, 120);
    assert.equal(config.headersTimeoutSeconds, 5);
    assert.equal(config.metricsPort, 9464);
    assert.equal(config.metricsToken, 'a-long-enough-metrics-token');
    assert.deepEqual(config.tls, { certFile: __filename, keyFile: __filename });
    assert.deepEqual(config.trustProxy, ['loopback', '10.0.0.0/8']);
    assert.equal(config.requireTls, true);
    assert.equal(config.eventRetentionDays, 60);
    assert.equal(config.rollupRetentionDays, 730);
    assert.equal(config.sessionIdleMinutes, 60);
    assert.equal(config.publicUrl, 'https://ingest.example.com');
    assert.equal(config.heapGrowingPercent, 0);
  });

  it('reads TRUST_PROXY as Express does: off, every hop, or a number of hops', () => {
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.equal(loadConfig({ REQUIRE_TLS: 'false' }).requireTls, false);
  });

  it('builds PUBLIC_URL from PORT by default', () => {
    assert.equal(loadConfig({ PORT: '8080' }).publicUrl, 'http://localhost:8080');
  });

  const invalid: Array<[string, string]> = [
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://db/x'],
    ['DATABASE_URL', 'sqlite:'],
    ['EVENT_CATEGORY_SET', 'C'],
    ['INGEST_BATCH_LIMIT', '0'],
    ['INGEST_BATCH_LIMIT', '1.5'],
    ['AUTH_CACHE_TTL_SECONDS', '61'],
    ['AUTH_CACHE_TTL_SECONDS', '-1'],
    ['RATE_LIMIT_PER_KEY', '0'],
    ['RATE_LIMIT_PER_ORG', 'lots'],
    ['IDEMPOTENCY_TTL_SECONDS', '0'],
    ['REDIS_URL', 'http://cache'],
    ['LOG_LEVEL', 'loud'],
    ['REQUEST_TIMEOUT_SECONDS', '0'],
    ['HEADERS_TIMEOUT_SECONDS', '31'], // more than the default REQUEST_TIMEOUT_SECONDS of 30
    ['METRICS_PORT', 'metrics'],
    ['METRICS_PORT', '65536'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', 'a token with spaces in it'],
    ['TLS_CERT_FILE', '/nonexistent/cert.pem'],
    ['TLS_CERT_FILE', __filename], // without TLS_KEY_FILE
    ['TLS_KEY_FILE', __filename], // without TLS_CERT_FILE
    ['TRUST_PROXY', 'yes please'],
    ['TRUST_PROXY', '300.1.1.1'],
    ['TRUST_PROXY', '0'],
    ['REQUIRE_TLS', 'maybe'],
    ['EVENT_RETENTION_DAYS', '0'],
    ['EVENT_RETENTION_DAYS', 'forever'],
    ['ROLLUP_RETENTION_DAYS', '-5'],
    ['SESSION_IDLE_MINUTES', '0'],
    ['SESSION_IDLE_MINUTES', '10081'],
    ['HEAP_GROWING_PERCENT', '301'],
    ['HEAP_GROWING_PERCENT', 'auto'],
    ['PUBLIC_URL', 'ingest.example.com'],
    ['PUBLIC_URL', 'ftp://ingest.example.com'],
    ['PUBLIC_URL', 'https://ingest.example.com/?a=1'],
  ];
  for (const [name, value] of invalid) {
    it(`refuses ${name}=${value} with a message naming the variable`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: unknown) => err instanceof ConfigError && err.message.includes(name),
      );
    });
  }

  it('stops the server at start with the variable named', function () {
    this.timeout(30_000);
    const result = spawnSync(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, '..', 'src', 'server.ts')], {
      env: { ...process.env, AUTH_CACHE_TTL_SECONDS: '120' },
      encoding: 'utf8',
    });
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, /AUTH_CACHE_TTL_SECONDS/);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config';

describe('Configuration', () => {
  it('has the defaults of decisions.md', () => {
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
      },
    );
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
  ];
  for (const [name, value] of invalid) {
    it(`refuses ${name}=${value} with a message naming the variable`, () => {
      assert.throws(() => loadConfig({ [name]: value }), (err: unknown) => err instanceof ConfigError && err.message.includes(name));
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

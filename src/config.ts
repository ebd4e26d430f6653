import { accessSync, constants } from 'node:fs';
import proxyAddr from 'proxy-addr';
import { categorySetNames, type CategorySetName } from './contract/categories';

export type DatabaseConfig = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export interface Config {
  port: number;
  database: DatabaseConfig;
  eventCategorySet: CategorySetName;
  ingestBatchLimit: number;
  authCacheTtlSeconds: number;
  rateLimitPerKey: number;
  rateLimitPerOrg: number;
  idempotencyTtlSeconds: number;
  redisUrl: string | undefined;
  logLevel: string;
  /** Time a client has to send a whole request, body included (408 request_timeout after it). */
  requestTimeoutSeconds: number;
  /** Time a client has to send the request line and headers: what a slowloris client cannot stretch. */
  headersTimeoutSeconds: number;
  /** A second, plain-HTTP listener that serves only GET /metrics, without a token. */
  metricsPort: number | undefined;
  /** When set, GET /metrics on the public port answers a request bearing this token. */
  metricsToken: string | undefined;
  /** HTTPS on the public port with these PEM files (reloaded on SIGHUP); plain HTTP without. */
  tls: { certFile: string; keyFile: string } | undefined;
  /** Express's `trust proxy`: whose X-Forwarded-For / X-Forwarded-Proto give req.ip and req.secure. */
  trustProxy: TrustProxy;
  /** Plain-HTTP requests to /api/ are refused with 400 tls_required. */
  requireTls: boolean;
  /** Timeline rows older than this are deleted in the background; undefined keeps them forever. */
  eventRetentionDays: number | undefined;
  /** The same for rollup tables (applied by the rollups work, which registers its tables). */
  rollupRetentionDays: number | undefined;
  /** A console session ends after this many minutes without use (and 7 days after sign-in in any case). */
  sessionIdleMinutes: number;
  /** The address people reach the service at, without a trailing slash: invite links start with it. */
  publicUrl: string;
  /** How far past what a full collection kept V8 lets the JavaScript heap grow before the next, in per cent; 0 leaves it to V8. */
  heapGrowingPercent: number;
}

/** false (the socket's peer is the client), true (trust every hop), a number of hops, or trusted addresses/subnets. */
export type TrustProxy = boolean | number | string[];

/** A configuration value that cannot be used; the message names the variable. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) {
    throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  }
  const value = Number(raw.trim());
  if (value < min || value > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function database(env: Env): DatabaseConfig {
  const raw = env.DATABASE_URL || 'sqlite:./data/ingest.db';
  if (raw.startsWith('sqlite:')) {
    const path = raw.slice('sqlite:'.length);
    if (!path) throw new ConfigError('DATABASE_URL "sqlite:" needs a path, e.g. sqlite:./data/ingest.db');
    return { kind: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('DATABASE_URL is not a valid postgres:// URL');
    }
    return { kind: 'postgres', url: raw };
  }
  throw new ConfigError(`DATABASE_URL must start with sqlite: or postgres://, got "${raw.split(':')[0]}:…"`);
}

function categorySet(env: Env): CategorySetName {
  const raw = (env.EVENT_CATEGORY_SET || 'B').trim();
  if (!(categorySetNames as readonly string[]).includes(raw)) {
    throw new ConfigError(`EVENT_CATEGORY_SET must be one of ${categorySetNames.join(', ')}, got "${raw}"`);
  }
  return raw as CategorySetName;
}

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL;
  if (!raw) return undefined;
  if (!/^rediss?:\/\//.test(raw)) throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  return raw;
}

function optionalInteger(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : integer(env, name, min, min, max);
}

function boolean(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

const MIN_METRICS_TOKEN_LENGTH = 16;

function metricsToken(env: Env): string | undefined {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < MIN_METRICS_TOKEN_LENGTH || /\s/.test(raw)) {
    throw new ConfigError(`METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters without spaces`);
  }
  return raw;
}

function readableFile(env: Env, name: string): string | undefined {
  const file = env[name];
  if (file === undefined || file === '') return undefined;
  try {
    accessSync(file, constants.R_OK);
  } catch {
    throw new ConfigError(`${name} names a file that cannot be read: "${file}"`);
  }
  return file;
}

function tls(env: Env): Config['tls'] {
  const certFile = readableFile(env, 'TLS_CERT_FILE');
  const keyFile = readableFile(env, 'TLS_KEY_FILE');
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  return { certFile, keyFile };
}

function trustProxy(env: Env): TrustProxy {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return integer(env, 'TRUST_PROXY', 0, 1, 10);
  const list = raw.split(',').map((entry) => entry.trim());
  try {
    proxyAddr.compile(list);
  } catch (err) {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, a number of hops, or addresses/subnets (e.g. loopback, 10.0.0.0/8): ${(err as Error).message}`,
    );
  }
  return list;
}

function publicUrl(env: Env, port: number): string {
  const raw = env.PUBLIC_URL?.trim();
  if (!raw) return `http://localhost:${port}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute http:// or https:// URL, got "${raw}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash) {
    throw new ConfigError(`PUBLIC_URL must be an http:// or https:// URL without query or fragment, got "${raw}"`);
  }
  return url.toString().replace(/\/+$/, '');
}

// On SQLite the writer thread is the bottleneck and the HTTP thread has time to spare, while the process keeps three
// heaps: collecting its old space at half again what the last collection kept, not three times, took the peak RSS
// from 304-306 MB to 242-243 at the same CPU and rate. On PostgreSQL the HTTP thread is the bottleneck: 50 there cost
// it 1-2 ms of CPU per 1,000 events for memory the target did not need (215 MB; make bench, 2026-11-27).
const defaultHeapGrowingPercent: Record<DatabaseConfig['kind'], number> = { sqlite: 50, postgres: 200 };

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Parses and validates the whole configuration once; throws ConfigError naming the variable. */
export function loadConfig(env: Env = process.env): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!logLevels.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${logLevel}"`);
  }
  const requestTimeoutSeconds = integer(env, 'REQUEST_TIMEOUT_SECONDS', 30, 1, 600);
  const headersTimeoutSeconds = integer(env, 'HEADERS_TIMEOUT_SECONDS', 10, 1, 600);
  if (headersTimeoutSeconds > requestTimeoutSeconds) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_SECONDS must not exceed REQUEST_TIMEOUT_SECONDS (${requestTimeoutSeconds}), got ${headersTimeoutSeconds}`,
    );
  }
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const databaseConfig = database(env);
  return {
    port,
    database: databaseConfig,
    eventCategorySet: categorySet(env),
    ingestBatchLimit: integer(env, 'INGEST_BATCH_LIMIT', 500, 1, 10000),
    authCacheTtlSeconds: integer(env, 'AUTH_CACHE_TTL_SECONDS', 30, 0, 60),
    rateLimitPerKey: integer(env, 'RATE_LIMIT_PER_KEY', 60, 1, 1_000_000),
    rateLimitPerOrg: integer(env, 'RATE_LIMIT_PER_ORG', 600, 1, 10_000_000),
    idempotencyTtlSeconds: integer(env, 'IDEMPOTENCY_TTL_SECONDS', 600, 1, 86_400),
    redisUrl: redisUrl(env),
    logLevel,
    requestTimeoutSeconds,
    headersTimeoutSeconds,
    metricsPort: optionalInteger(env, 'METRICS_PORT', 0, 65535),
    metricsToken: metricsToken(env),
    tls: tls(env),
    trustProxy: trustProxy(env),
    requireTls: boolean(env, 'REQUIRE_TLS'),
    eventRetentionDays: optionalInteger(env, 'EVENT_RETENTION_DAYS', 1, 36_500),
    rollupRetentionDays: optionalInteger(env, 'ROLLUP_RETENTION_DAYS', 1, 36_500),
    sessionIdleMinutes: integer(env, 'SESSION_IDLE_MINUTES', 720, 1, 10_080),
    publicUrl: publicUrl(env, port),
    heapGrowingPercent: integer(env, 'HEAP_GROWING_PERCENT', defaultHeapGrowingPercent[databaseConfig.kind], 0, 300),
  };
}

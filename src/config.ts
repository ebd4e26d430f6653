import { categorySetNames, type CategorySetName } from './contract/categories';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string };

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
}

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
    throw new ConfigError(`HEADERS_TIMEOUT_SECONDS must not exceed REQUEST_TIMEOUT_SECONDS (${requestTimeoutSeconds}), got ${headersTimeoutSeconds}`);
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    database: database(env),
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
  };
}

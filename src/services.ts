import type { Logger } from 'pino';
import type { Config } from './config';
import { configuredDocument } from './contract/document';
import type { OpenApiDocument } from './contract/document-source';
import { ContractValidators, type ItemValidator } from './contract/validators';
import type { Db } from './data/db';
import { Authenticator } from './domain/authenticator';
import { IdempotencyService } from './domain/idempotency';
import { MemoryRateLimitStore } from './domain/rate-limit/memory-store';
import { RateLimiter } from './domain/rate-limit/rate-limiter';
import { RedisRateLimitStore } from './domain/rate-limit/redis-store';
import type { RateLimitStore } from './domain/rate-limit/store';

/** The long-lived collaborators a running app shares across requests. */
export interface Services {
  config: Config;
  db: Db;
  /** The contract as configured: the active EventCategory set and batch limit. */
  contract: OpenApiDocument;
  /** Compiled once from `contract`. */
  validators: ContractValidators;
  /** The per-item validators of the ingest endpoints, taken from `validators`. */
  validate: { event: ItemValidator; snapshot: ItemValidator };
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  idempotency: IdempotencyService;
  /** Releases what the services opened (the Redis connection, timers); the database stays the caller's. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  logger: Logger;
  /** Replaces the store the configuration selects (tests: a memory store on a fake clock). */
  rateLimitStore?: RateLimitStore;
}

export function createServices(config: Config, db: Db, options: ServiceOptions): Services {
  const contract = configuredDocument(config);
  const validators = new ContractValidators(contract);
  const store = options.rateLimitStore ?? rateLimitStore(config, options.logger);
  const rateLimiter = new RateLimiter(store, config.rateLimitPerKey, config.rateLimitPerOrg);
  const idempotency = new IdempotencyService(db, config.idempotencyTtlSeconds);
  return {
    config,
    db,
    contract,
    validators,
    validate: { event: validators.item('IngestEvent'), snapshot: validators.item('IngestSnapshot') },
    authenticator: new Authenticator(db, config.authCacheTtlSeconds),
    rateLimiter,
    idempotency,
    close: async () => {
      idempotency.close();
      await rateLimiter.close();
    },
  };
}

/** Redis when configured, shared by every instance; otherwise this process's memory. */
function rateLimitStore(config: Config, logger: Logger): RateLimitStore {
  return config.redisUrl ? new RedisRateLimitStore(config.redisUrl, logger) : new MemoryRateLimitStore();
}

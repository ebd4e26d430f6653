import type { Logger } from 'pino';
import type { Config } from './config';
import { configuredDocument } from './contract/document';
import type { OpenApiDocument } from './contract/document-source';
import type { Schema } from './contract/types';
import { ContractValidators, type TypedValidator } from './contract/validators';
import { DayListCache } from './data/day-list-cache';
import type { Db } from './data/db';
import { cursorSecret } from './data/settings';
import type { ReadContext } from './domain/console-read';
import { CursorCodec } from './domain/cursor';
import { Authenticator } from './domain/authenticator';
import { IdempotencyService } from './domain/idempotency';
import { KeptRules } from './domain/ingest-rules';
import { MemoryRateLimitStore } from './domain/rate-limit/memory-store';
import { RateLimiter } from './domain/rate-limit/rate-limiter';
import { RedisRateLimitStore } from './domain/rate-limit/redis-store';
import { RollupWorker, type RollupWorkerOptions } from './domain/rollups';
import { StatementGroups, type StatementLimits } from './domain/statement-groups';
import { StatisticManifests } from './domain/statistic-manifest';
import { ConsoleSessions } from './domain/sessions';
import type { PasswordHasher } from './domain/passwords';
import type { RateLimitStore } from './domain/rate-limit/store';

// PostgreSQL: an app's batches stored without a transaction, one statement at a time, those that wait meanwhile
// together in the next, up to 1,000 events a statement; a second statement beside it only while half a statement's
// worth (500 events) waits. Two at a time always, in make bench (10 connections, 2 cores), kept both running nine
// tenths of the time at 2.4 batches each, and their backends took the cores from the HTTP thread, which every request
// needs; one at a time carries 5 batches a statement at 14 ms of PostgreSQL's CPU per 1,000 events against 19-21, but
// leaves a third of the machine idle, and a second statement only once 1,000 events wait (never, at 10 connections)
// left it idle too. At 500, quick runs in turn gave 0.71x raw on average against 0.63x at 1,000 on a slow VM and
// 0.78-0.84x against 0.69-0.72x on a fast one (docs/performance-history.md, 2026-12-01).
const STATEMENT_LIMITS: StatementLimits = { perApp: 2, maxEvents: 1000, anotherOnceWaiting: 500 };

/** The long-lived collaborators a running app shares across requests. */
export interface Services {
  config: Config;
  db: Db;
  /** The contract as configured: the active EventCategory set and batch limit. */
  contract: OpenApiDocument;
  /** Compiled once from `contract`. */
  validators: ContractValidators;
  /** The per-item validators of the ingest endpoints, taken from `validators`. */
  validate: { event: TypedValidator<Schema<'IngestEvent'>>; snapshot: TypedValidator<Schema<'IngestSnapshot'>> };
  authenticator: Authenticator;
  /** PostgreSQL: the batches stored without a transaction, several to a statement when they queue. */
  statements: StatementGroups;
  /** Each app's ingest rules, kept between batches where the statement storing a batch checks them. */
  keptRules: KeptRules;
  manifests: StatisticManifests;
  rateLimiter: RateLimiter;
  idempotency: IdempotencyService;
  /** Console sign-in and sessions. */
  sessions: ConsoleSessions;
  /** What the console's read endpoints need: the database and the cursor signer. */
  read: ReadContext;
  /** Keeps the daily rollups; the server starts it (tests call catchUp()). */
  rollups: RollupWorker;
  /** Releases what the services opened (the Redis connection, timers); the database stays the caller's. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  logger: Logger;
  /** Replaces the store the configuration selects (tests: a memory store on a fake clock). */
  rateLimitStore?: RateLimitStore;
  /** The clock of console sessions (tests move it instead of waiting). */
  now?: () => Date;
  /** Replaces the password hasher (tests watch the work done). */
  passwords?: PasswordHasher;
  /** The rollups worker's timing (tests: a poll too slow to matter, to see that a commit wakes it). */
  rollups?: Omit<RollupWorkerOptions, 'logger'>;
}

export function createServices(config: Config, db: Db, options: ServiceOptions): Services {
  const contract = configuredDocument(config);
  const validators = new ContractValidators(contract);
  const store = options.rateLimitStore ?? rateLimitStore(config, options.logger);
  const rateLimiter = new RateLimiter(store, config.rateLimitPerKey, config.rateLimitPerOrg);
  const idempotency = new IdempotencyService(db, config.idempotencyTtlSeconds);
  const rollups = new RollupWorker(db, { ...options.rollups, logger: options.logger });
  return {
    config,
    db,
    contract,
    validators,
    validate: { event: validators.typed('IngestEvent'), snapshot: validators.typed('IngestSnapshot') },
    authenticator: new Authenticator(db, config.authCacheTtlSeconds),
    statements: new StatementGroups(db.kysely, STATEMENT_LIMITS),
    keptRules: new KeptRules(db),
    manifests: new StatisticManifests(db, validators),
    rateLimiter,
    idempotency,
    sessions: new ConsoleSessions(db, { idleMinutes: config.sessionIdleMinutes, now: options.now, passwords: options.passwords }),
    read: { db: db.kysely, cursors: new CursorCodec(() => cursorSecret(db.kysely)), dayLists: new DayListCache() },
    rollups,
    close: async () => {
      await rollups.close();
      idempotency.close();
      await rateLimiter.close();
    },
  };
}

/** Redis when configured, shared by every instance; otherwise this process's memory. */
function rateLimitStore(config: Config, logger: Logger): RateLimitStore {
  return config.redisUrl ? new RedisRateLimitStore(config.redisUrl, logger) : new MemoryRateLimitStore();
}

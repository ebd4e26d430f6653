import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Redis, type Result } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimitStoreUnavailable, type HitResult, type Limits, type RateLimitStore, type Subject } from './store';

/**
 * One round trip checks and records both windows, so instances sharing the
 * server can never admit more than a limit between them. Time comes from the
 * server's TIME, one clock for every instance; scores are in milliseconds,
 * the unit of the window.
 *
 * KEYS[1], KEYS[2]: the key's and the organization's sorted sets (member: a
 * request id, score: its time). ARGV: window in ms, request id, key limit,
 * organization limit. Returns allowed (0/1), then count and ms until quota
 * frees up for each window (see WindowUsage).
 */
const HIT_SCRIPT = `
redis.replicate_commands()
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[1])
local limits = { tonumber(ARGV[3]), tonumber(ARGV[4]) }
local counts = {}
local allowed = 1
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  counts[i] = redis.call('ZCARD', key)
  if counts[i] >= limits[i] then allowed = 0 end
end
local result = { allowed }
for i, key in ipairs(KEYS) do
  if allowed == 1 then
    redis.call('ZADD', key, now, ARGV[2])
    redis.call('PEXPIRE', key, window)
    counts[i] = counts[i] + 1
  end
  local freesIn = 0
  if counts[i] > 0 then
    local pivot = math.max(0, counts[i] - limits[i])
    local oldest = redis.call('ZRANGE', key, pivot, pivot, 'WITHSCORES')
    freesIn = tonumber(oldest[2]) + window - now
  end
  result[#result + 1] = counts[i]
  result[#result + 1] = freesIn
end
return result
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    rateLimitHit(
      keyWindow: string,
      orgWindow: string,
      windowMs: number,
      requestId: string,
      perKey: number,
      perOrg: number,
    ): Result<number[], Context>;
  }
}

/** Bounds a request's wait on Redis; past it the request gets 503 rather than hanging. */
const COMMAND_TIMEOUT_MS = 500;

/** Rate-limit state in Redis, shared by every instance pointed at it. */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: Redis;
  private reachable = true;

  constructor(
    url: string,
    private readonly logger: Logger,
    private readonly keyPrefix = 'ingest:ratelimit:',
  ) {
    this.redis = new Redis(url, {
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      // Fail at once while disconnected (no offline queue) and drop what was
      // in flight when the connection broke (no retries): a hit that already
      // got its 503 must not be recorded later by a queued or resent command.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // Reconnect for ever, at most a second apart: the Retry-After of a 503.
      retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    });
    this.redis.defineCommand('rateLimitHit', { numberOfKeys: 2, lua: HIT_SCRIPT });
    this.redis.on('error', (err) => this.changed(false, err));
    this.redis.on('ready', () => this.changed(true));
  }

  async hit(subject: Subject, limits: Limits): Promise<HitResult> {
    // The braces make both keys of one organization hash to the same Redis Cluster slot, as a script needs.
    const base = `${this.keyPrefix}{${subject.orgId}}`;
    try {
      await this.connected();
      const [allowed, keyCount, keyFreesIn, orgCount, orgFreesIn] = (await this.redis.rateLimitHit(
        `${base}:key:${subject.keyId}`,
        `${base}:org`,
        limits.windowMs,
        randomUUID(),
        limits.perKey,
        limits.perOrg,
      )) as [number, number, number, number, number];
      return {
        allowed: allowed === 1,
        key: { count: keyCount, freesInMs: keyFreesIn },
        org: { count: orgCount, freesInMs: orgFreesIn },
      };
    } catch (err) {
      throw new RateLimitStoreUnavailable(`the rate-limit store (Redis) failed: ${(err as Error).message}`, { cause: err });
    }
  }

  async answers(): Promise<boolean> {
    try {
      await this.connected();
      await this.redis.ping();
      return true;
    } catch {
      return false;
    }
  }

  /** No request is in flight by the time the service closes, so there is nothing to wait for. */
  async close(): Promise<void> {
    this.redis.disconnect();
  }

  /** Waits, within the command timeout, for a connection being made (at start or on reconnect). */
  private async connected(): Promise<void> {
    if (this.redis.status === 'ready') return;
    if (this.redis.status !== 'connecting' && this.redis.status !== 'connect') {
      throw new Error(`not connected (${this.redis.status})`);
    }
    await once(this.redis, 'ready', { signal: AbortSignal.timeout(COMMAND_TIMEOUT_MS) });
  }

  /** Logs when Redis goes away and comes back, not every failed reconnect. */
  private changed(reachable: boolean, err?: Error): void {
    if (reachable === this.reachable) return;
    this.reachable = reachable;
    if (reachable) this.logger.info('rate-limit store (Redis) reachable again');
    else this.logger.warn({ err }, 'rate-limit store (Redis) unreachable: /api/v1 answers 503 until it is back');
  }
}

import { apiKeyPrefix } from '../contract/constants';
import { ApiError } from '../errors';
import type { Db } from '../data/db';
import { findKeyByHash, touchKey, type KeyRecord } from '../data/credentials';
import { hashApiKey, isWellFormedKey } from './api-keys';

/** What an authenticated request acts as. */
export type Principal = Omit<KeyRecord, 'revokedAt' | 'expiresAt' | 'lastUsedAt'>;

interface CacheEntry {
  record: KeyRecord | undefined;
  loadedAt: number;
}

const MAX_CACHED_KEYS = 10_000;
/** A key's lastUsedAt is kept to within this: at most one write per key per minute, whatever the traffic. */
export const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * Resolves bearer credentials to a principal. Lookups are cached for at most
 * `ttlSeconds`, which therefore bounds how long a revocation takes to apply.
 * The cache holds only hashes and is bounded in size.
 */
export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly db: Db,
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (!authorization || !match) throw new ApiError('missing_authorization');
    const key = match[1] as string;
    if (!isWellFormedKey(key))
      throw new ApiError('invalid_key', `The API key is malformed: expected ${apiKeyPrefix} followed by 43 characters.`);

    const record = await this.lookup(hashApiKey(key));
    if (!record) throw new ApiError('invalid_key');
    if (record.revokedAt) throw new ApiError('key_revoked');
    if (record.expiresAt && Date.parse(record.expiresAt) <= this.now()) throw new ApiError('key_expired');
    if (!record.apiEnabled) throw new ApiError('plan_disabled');
    const { revokedAt: _revoked, expiresAt: _expires, lastUsedAt: _lastUsed, ...principal } = record;
    return principal;
  }

  private async lookup(hash: string): Promise<KeyRecord | undefined> {
    const cached = this.cache.get(hash);
    if (cached && this.now() - cached.loadedAt < this.ttlSeconds * 1000) return cached.record;

    const record = await findKeyByHash(this.db.kysely, hash);
    if (record) this.noteUse(record);
    this.cache.delete(hash);
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(hash, { record, loadedAt: this.now() });
    return record;
  }

  /**
   * Forgets what is cached of the key, so that a revocation made in this
   * process applies to its next request; other instances see it within the TTL.
   */
  forgetKey(keyId: string): void {
    for (const [hash, entry] of this.cache) if (entry.record?.keyId === keyId) this.cache.delete(hash);
  }

  /**
   * Keeps the key's lastUsedAt, off the request's path: only when the cache is
   * refreshed and the stored time is a minute old. A lost write only leaves
   * lastUsedAt older; it must never fail the request.
   */
  private noteUse(record: KeyRecord): void {
    const now = this.now();
    if (record.lastUsedAt && now - Date.parse(record.lastUsedAt) < LAST_USED_GRANULARITY_MS) return;
    touchKey(this.db.kysely, record.keyId, new Date(now), LAST_USED_GRANULARITY_MS).catch(() => {});
  }
}

import { claimLeaseSeconds } from '../contract/constants';
import type { Db } from '../data/db';
import {
  completeClaim,
  extendLease,
  findRecord,
  insertClaim,
  purgeExpired,
  releaseClaim,
  takeOverExpired,
  type RecordKey,
  type StoredResponse,
} from '../data/idempotency';
import type { Database, Executor } from '../data/schema';
import type { UnitOfWork } from '../data/transaction';
import type { Transaction } from 'kysely';
import { ApiError, type ErrorCode } from '../errors';

/**
 * How long a claim holds without news from its request. A running request
 * renews it; a request whose process died frees its key after at most this long.
 */
const CLAIM_LEASE_MS = claimLeaseSeconds * 1000;
const PURGE_EVERY_MS = 60_000;

/**
 * Whether a retry gets this answer back. Not when the retry may rightly get
 * another: a 5xx (nothing was done), 401 and 402 plan_disabled (the key or
 * plan may be fixed), 409 (the first request may finish) and 429 (the window moves).
 */
function isReplayable(status: number, code: ErrorCode | undefined): boolean {
  return status < 500 && status !== 401 && status !== 409 && status !== 429 && code !== 'plan_disabled';
}

export type Begun = { replay: StoredResponse } | { claim: IdempotencyClaim };

/**
 * Idempotency-Key handling scoped to (API key, Idempotency-Key). A first request
 * claims the key with a committed in-progress record (so every instance sees it);
 * its response is stored in the same transaction as the data it describes, then
 * replayed byte for byte for the replay window.
 */
export class IdempotencyService {
  private readonly purgeTimer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    // Expired records are purged off the request path, by the expires_at index.
    this.purgeTimer = setInterval(() => void purgeExpired(this.db.kysely, this.iso(0)).catch(() => {}), PURGE_EVERY_MS).unref();
  }

  async begin(key: RecordKey, fingerprint: string): Promise<Begun> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.iso(0);
      const lease = this.iso(CLAIM_LEASE_MS);
      if (await insertClaim(this.db.kysely, key, fingerprint, now, lease)) return { claim: this.claim(key, fingerprint) };
      const record = await findRecord(this.db.kysely, key);
      if (!record) continue;
      if (record.expiresAt <= now) {
        if (await takeOverExpired(this.db.kysely, key, fingerprint, now, lease)) return { claim: this.claim(key, fingerprint) };
        continue;
      }
      if (record.fingerprint !== fingerprint) {
        throw new ApiError(
          'idempotency_key_reused',
          `This Idempotency-Key was already used within the last ${this.ttlSeconds} seconds with a different method, path or body.`,
        );
      }
      if (record.state === 'in_progress') throw new ApiError('idempotency_in_progress');
      return { replay: record };
    }
    throw new ApiError('idempotency_in_progress');
  }

  close(): void {
    clearInterval(this.purgeTimer);
  }

  private claim(key: RecordKey, fingerprint: string): IdempotencyClaim {
    return new IdempotencyClaim(this.db, key, fingerprint, (ms) => this.iso(ms), this.ttlSeconds);
  }

  private iso(offsetMs: number): string {
    return new Date(this.now() + offsetMs).toISOString();
  }
}

/**
 * What storing a claimed key's response needs: plain data, so that the
 * transaction storing it may run in another thread (src/data/writer.ts).
 */
export interface ClaimTicket {
  key: RecordKey;
  fingerprint: string;
  /** When the stored response stops being replayed. */
  expiresAt: string;
}

/**
 * Stores a request's response inside the transaction that commits what it
 * describes: with `claim`, the reply a retry gets back commits with its data, or neither does.
 */
async function storeReply(trx: Executor, claim: ClaimTicket | undefined, response: StoredResponse): Promise<void> {
  if (!claim) return;
  if (!(await completeClaim(trx, claim.key, claim.fingerprint, response, claim.expiresAt))) {
    throw new ApiError(
      'idempotency_in_progress',
      'This request took too long and another request with the same Idempotency-Key took over.',
    );
  }
}

/** A response decided inside the transaction that commits what it describes. */
export type RenderedReply = Omit<StoredResponse, 'requestId'>;

/**
 * Inside a request's transaction: runs its unit of work, renders the outcome
 * and stores the rendered reply with `claim` (storeReply).
 */
export async function withStoredReply<T>(
  trx: Transaction<Database>,
  work: UnitOfWork<T>,
  render: (outcome: T) => RenderedReply,
  claim: ClaimTicket | undefined,
  requestId: string,
): Promise<{ outcome: T; reply: RenderedReply }> {
  const outcome = await work(trx);
  const reply = render(outcome);
  await storeReply(trx, claim, { ...reply, requestId });
  return { outcome, reply };
}

/** The key held by one request until its response is stored or the claim released. */
export class IdempotencyClaim {
  private readonly heartbeat: NodeJS.Timeout;
  private open = true;
  /** The response was committed with its data: the record is done and there is nothing to free. */
  private storedInTransaction = false;

  constructor(
    private readonly db: Db,
    private readonly key: RecordKey,
    private readonly fingerprint: string,
    private readonly at: (offsetMs: number) => string,
    private readonly ttlSeconds: number,
  ) {
    this.heartbeat = setInterval(
      () => void extendLease(this.db.kysely, key, fingerprint, at(CLAIM_LEASE_MS)).catch(() => {}),
      CLAIM_LEASE_MS / 3,
    ).unref();
  }

  /**
   * For the transaction that commits what the response describes to store it
   * with storeReply; once that committed, call stored().
   */
  ticket(): ClaimTicket {
    return { key: this.key, fingerprint: this.fingerprint, expiresAt: this.at(this.ttlSeconds * 1000) };
  }

  /** The transaction that stored the response with this claim's ticket committed. */
  stored(): void {
    this.storedInTransaction = true;
  }

  /** For an answer made outside such a transaction (an error): stored when a retry should replay it, else the key is freed. */
  async settle(response: StoredResponse & { code?: ErrorCode }): Promise<void> {
    if (!this.open) return;
    this.end();
    const { code, ...stored } = response;
    if (isReplayable(stored.status, code)) {
      await completeClaim(this.db.kysely, this.key, this.fingerprint, stored, this.at(this.ttlSeconds * 1000));
    } else {
      await releaseClaim(this.db.kysely, this.key, this.fingerprint);
    }
  }

  /** The response went out; a claim nobody settled (a bug, a lost connection) is freed rather than left to its lease. */
  async finished(): Promise<void> {
    if (!this.open) return;
    this.end();
    if (!this.storedInTransaction) await releaseClaim(this.db.kysely, this.key, this.fingerprint);
  }

  private end(): void {
    this.open = false;
    clearInterval(this.heartbeat);
  }
}

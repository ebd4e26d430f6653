/** The two windows one request is counted in. */
export interface Subject {
  keyId: string;
  orgId: string;
}

/** How many requests each window admits within `windowMs`. */
export interface Limits {
  perKey: number;
  perOrg: number;
  windowMs: number;
}

/** A window right after the check. */
export interface WindowUsage {
  /** Requests counted in the window, this one included when it was admitted. */
  count: number;
  /**
   * Milliseconds until the window frees quota: until the oldest counted request
   * leaves it or, when it is over its limit, the one whose leaving brings it
   * back under. 0 when nothing is counted.
   */
  freesInMs: number;
}

export interface HitResult {
  allowed: boolean;
  key: WindowUsage;
  org: WindowUsage;
}

/**
 * Sliding-log rate-limit state. Both stores keep, per window, the times of
 * the requests admitted during the last `windowMs`, so a limit holds exactly
 * at any instant (a fixed window or the two-bucket approximation lets up to
 * twice the limit through across a boundary). A refused request is not
 * recorded: a client hammering through a 429 does not extend its own wait.
 */
export interface RateLimitStore {
  /** Admits the request only if both windows have room, and then records it in both, atomically. */
  hit(subject: Subject, limits: Limits): Promise<HitResult>;
  /** Whether the store answers now (for /readyz); a store inside this process always does. */
  answers?(): Promise<boolean>;
  close(): Promise<void>;
}

/** The store cannot be reached or did not answer in time, so the request could not be checked. */
export class RateLimitStoreUnavailable extends Error {}

import type { RateLimitStore, WindowUsage } from './store';

export const windowNames = ['key', 'org'] as const;
export type WindowName = (typeof windowNames)[number];

/** One window as a client is told about it. */
export interface WindowState {
  limit: number;
  /** Requests still admitted right now; never negative. */
  remaining: number;
  /** Whole seconds until the window frees quota (rounded up); 0 when nothing is counted. */
  resetSeconds: number;
}

export interface RateLimitDecision {
  windows: Record<WindowName, WindowState>;
  /** Present when the request is refused. */
  refusal?: {
    /** The windows that are full. */
    exceeded: WindowName[];
    /** Whole seconds until every full window admits a request again, at least 1. */
    retryAfterSeconds: number;
  };
}

/** Limits are requests per second. */
const WINDOW_SECONDS = 1;

/** Per-key and per-organization sliding-window limits over a store. */
export class RateLimiter {
  readonly windowSeconds = WINDOW_SECONDS;

  constructor(
    private readonly store: RateLimitStore,
    private readonly perKey: number,
    private readonly perOrg: number,
  ) {}

  async check(keyId: string, orgId: string): Promise<RateLimitDecision> {
    const result = await this.store.hit({ keyId, orgId }, { perKey: this.perKey, perOrg: this.perOrg, windowMs: WINDOW_SECONDS * 1000 });
    const windows = { key: state(result.key, this.perKey), org: state(result.org, this.perOrg) };
    if (result.allowed) return { windows };
    const exceeded = windowNames.filter((name) => windows[name].remaining === 0);
    const retryAfterSeconds = Math.max(1, ...exceeded.map((name) => windows[name].resetSeconds));
    return { windows, refusal: { exceeded, retryAfterSeconds } };
  }

  /** Whether the store holding the windows answers (Redis may be away; memory is always there). */
  async reachable(): Promise<boolean> {
    return (await this.store.answers?.()) ?? true;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

function state(usage: WindowUsage, limit: number): WindowState {
  return {
    limit,
    remaining: Math.max(0, limit - usage.count),
    resetSeconds: Math.max(0, Math.ceil(usage.freesInMs / 1000)),
  };
}

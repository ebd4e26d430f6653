import { performance } from 'node:perf_hooks';
import type { HitResult, Limits, RateLimitStore, Subject, WindowUsage } from './store';

/**
 * Rate-limit state of this process only: right for a single instance. A hit
 * never awaits between check and record, so it is atomic. Memory stays
 * bounded by what was active during the last window: the map is kept in order
 * of last use, so idle logs gather at its front and are dropped there.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly logs = new Map<string, number[]>();

  /** The default clock is monotonic, so a wall-clock step can neither reopen nor freeze a window. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  async hit(subject: Subject, limits: Limits): Promise<HitResult> {
    const now = this.now();
    const since = now - limits.windowMs;
    const key = this.current(`key:${subject.keyId}`, since);
    const org = this.current(`org:${subject.orgId}`, since);
    const allowed = key.length < limits.perKey && org.length < limits.perOrg;
    if (allowed) {
      key.push(now);
      org.push(now);
    }
    this.evictIdle(since);
    return {
      allowed,
      key: usage(key, limits.perKey, now, limits.windowMs),
      org: usage(org, limits.perOrg, now, limits.windowMs),
    };
  }

  async close(): Promise<void> {
    this.logs.clear();
  }

  /** The log without the requests that left the window, moved to the end as the most recently used. */
  private current(id: string, since: number): number[] {
    const log = this.logs.get(id) ?? [];
    let expired = 0;
    while (expired < log.length && (log[expired] as number) <= since) expired++;
    log.splice(0, expired);
    this.logs.delete(id);
    this.logs.set(id, log);
    return log;
  }

  private evictIdle(since: number): void {
    for (const [id, log] of this.logs) {
      if (log.length > 0 && (log[log.length - 1] as number) > since) return;
      this.logs.delete(id);
    }
  }
}

function usage(log: number[], limit: number, now: number, windowMs: number): WindowUsage {
  if (log.length === 0) return { count: 0, freesInMs: 0 };
  const pivot = log[Math.max(0, log.length - limit)] as number;
  return { count: log.length, freesInMs: pivot + windowMs - now };
}

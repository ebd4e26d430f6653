import type { NextFunction, Request, Response } from 'express';
import { windowNames, type RateLimitDecision, type RateLimiter, type WindowName } from '../domain/rate-limit/rate-limiter';
import { RateLimitStoreUnavailable } from '../domain/rate-limit/store';
import { ApiError } from '../errors';
import { metrics } from '../metrics';

const described: Record<WindowName, string> = { key: 'this key', org: 'its organization (all its keys together)' };

/**
 * Runs right after authentication, before the body is read. The headers are
 * set here, so every later answer carries them, errors and the 429 included.
 * Without its store the limiter cannot vouch for the request: 503, never
 * unlimited traffic.
 */
export function rateLimit(limiter: RateLimiter) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const decision = await limiter.check(req.principal.keyId, req.principal.orgId).catch((err: unknown) => {
      if (!(err instanceof RateLimitStoreUnavailable)) throw err;
      const unavailable = new ApiError(
        'service_unavailable',
        'The rate-limit store is unreachable; nothing was changed. Retry after Retry-After seconds.',
        {
          'Retry-After': '1',
        },
      );
      throw Object.assign(unavailable, { cause: err }); // the reason reaches the error log, not the client
    });
    res.set(rateLimitHeaders(decision, limiter.windowSeconds));
    if (decision.refusal) {
      const { exceeded, retryAfterSeconds } = decision.refusal;
      for (const window of exceeded) metrics.rateLimited.inc({ window });
      const which = exceeded.map((name) => `${decision.windows[name].limit} requests per second for ${described[name]}`);
      throw new ApiError('rate_limited', `Rate limit of ${which.join(' and of ')} exceeded; retry after ${retryAfterSeconds} s.`, {
        'Retry-After': String(retryAfterSeconds),
      });
    }
    next();
  };
}

/** The per-key window as X-RateLimit-*, and both windows in draft-ietf-httpapi-ratelimit-headers syntax. */
function rateLimitHeaders({ windows }: RateLimitDecision, windowSeconds: number): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(windows.key.limit),
    'X-RateLimit-Remaining': String(windows.key.remaining),
    'RateLimit-Policy': windowNames.map((name) => `"${name}";q=${windows[name].limit};w=${windowSeconds}`).join(', '),
    RateLimit: windowNames.map((name) => `"${name}";r=${windows[name].remaining};t=${windows[name].resetSeconds}`).join(', '),
  };
}

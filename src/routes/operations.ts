import { Router } from 'express';
import { pendingMigrations } from '../data/db';
import { databaseReachable } from '../data/health';
import { ApiError } from '../errors';
import { metricsWithToken } from '../http/metrics';
import type { Services } from '../services';

/**
 * For the platform running the service. /healthz (in documentRoutes) says the
 * process answers; /readyz says it can serve traffic: the database answers
 * with every migration applied, and the rate-limit store (Redis) answers.
 */
export function operationsRoutes(services: Services): Router {
  const router = Router();

  router.get('/readyz', async (_req, res) => {
    const problems: string[] = [];
    if (!(await databaseReachable(services.db.kysely))) problems.push('the database is unreachable');
    else {
      const pending = await pendingMigrations(services.db).catch(() => ['(unknown)']);
      if (pending.length) problems.push(`migrations not applied: ${pending.join(', ')}`);
    }
    if (!(await services.rateLimiter.reachable())) problems.push('the rate-limit store (Redis) is unreachable');
    if (problems.length) throw new ApiError('service_unavailable', `Not ready: ${problems.join('; ')}.`, { 'Retry-After': '1' });
    res.json({ ok: true });
  });

  const token = services.config.metricsToken;
  if (token) router.get('/metrics', metricsWithToken(token));
  return router;
}

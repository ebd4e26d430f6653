import type { NextFunction, Request, Response, Router } from 'express';
import { Router as createRouter } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { middlewareDocument } from '../contract/document';
import { ingestEvents } from '../handlers/events';
import { ping } from '../handlers/ping';
import { ingestSnapshots } from '../handlers/snapshots';
import { enforceBatchLimit } from '../http/batch-limit';
import { statisticsHandlers } from '../handlers/statistics';
import { authenticate } from '../http/authenticate';
import { ingestCors } from '../http/cors';
import { idempotency } from '../http/idempotency';
import { jsonBody } from '../http/json-body';
import { rateLimit } from '../http/rate-limit';
import type { Services } from '../services';

/** Everything under /api/v1, in the order of checks the contract documents. */
export function apiRoutes(services: Services): Router {
  const doc = services.contract;
  const router = createRouter();
  const apiVersion = String(doc.info['x-api-version']);

  router.use('/api/v1', (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('X-API-Version', apiVersion);
    next();
  });
  router.use('/api/v1/ingest', ingestCors);
  router.use('/api/v1', authenticate(services.authenticator));
  router.use('/api/v1', rateLimit(services.rateLimiter));
  router.use('/api/v1', jsonBody);
  router.post(['/api/v1/ingest/events', '/api/v1/ingest/snapshots'], idempotency(services.idempotency));
  router.use('/api/v1/ingest/events', enforceBatchLimit(services.config.ingestBatchLimit));
  router.use(
    OpenApiValidator.middleware({
      apiSpec: middlewareDocument(doc) as never,
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: false,
      validateSecurity: false,
      ajvFormats: { mode: 'full' },
    }),
  );

  const statistics = statisticsHandlers(services);
  router.get('/api/v1/ingest/ping', ping);
  router.post('/api/v1/ingest/events', ingestEvents(services));
  router.post('/api/v1/ingest/snapshots', ingestSnapshots(services));
  router.get('/api/v1/apps/statistics', statistics.getStatistics);
  router.put('/api/v1/apps/statistics', statistics.putStatistics);
  return router;
}

import type { NextFunction, Request, Response, Router } from 'express';
import { Router as createRouter } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import type { OpenApiDocument } from '../contract/document-source';
import { middlewareDocument } from '../contract/document';
import { ping } from '../handlers/ping';
import { authenticate } from '../http/authenticate';
import { ingestCors } from '../http/cors';
import { jsonBody } from '../http/json-body';
import { rateLimit } from '../http/rate-limit';
import type { Services } from '../services';

/** Everything under /api/v1, in the order of checks the contract documents. */
export function apiRoutes(doc: OpenApiDocument, services: Services): Router {
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
  router.use(
    OpenApiValidator.middleware({
      apiSpec: middlewareDocument(doc) as never,
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: false,
      validateSecurity: false,
      ajvFormats: { mode: 'full' },
    }),
  );

  router.get('/api/v1/ingest/ping', ping);
  return router;
}

import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { Config } from './config';
import { serializeDocument } from './contract/document';
import type { Db } from './data/db';
import { accessLog } from './http/access-log';
import { errorHandler } from './http/error-handler';
import { httpMetrics } from './http/metrics';
import { requestContext } from './http/request-context';
import { createLogger } from './logger';
import { apiRoutes } from './routes/api';
import { consoleRoutes } from './routes/console';
import { documentRoutes } from './routes/documents';
import { operationsRoutes } from './routes/operations';
import { createServices, type Services } from './services';

// Routes outside the contract, for the metrics' route label of requests refused before a route matched them.
const OPERATIONS_PATHS = ['/healthz', '/readyz', '/metrics', '/openapi/v1.yaml', '/docs', '/docs/redoc.standalone.js'];

export interface AppOptions {
  logger?: Logger;
  /** Services built by the caller, who then closes them; by default the app builds its own. */
  services?: Services;
  /** Where the built web console is; `dist/web` by default. */
  consoleDir?: string;
}

/** Builds the HTTP application on an open, migrated database; listening is the caller's business. */
export function createApp(config: Config, db: Db, options: AppOptions = {}): Express {
  const logger = options.logger ?? createLogger(config.logLevel);
  const services = options.services ?? createServices(config, db, { logger });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  app.use(requestContext);
  app.use(httpMetrics([...Object.keys(services.contract.paths), ...OPERATIONS_PATHS]));
  app.use(accessLog(logger));
  app.use(helmet());
  app.use(documentRoutes(serializeDocument(services.contract)));
  app.use(consoleRoutes(options.consoleDir));
  app.use(operationsRoutes(services));
  app.use(apiRoutes(services));
  app.use(errorHandler(logger));
  return app;
}

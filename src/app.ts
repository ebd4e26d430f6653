import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { Config } from './config';
import { serializeDocument } from './contract/document';
import type { Db } from './data/db';
import { accessLog } from './http/access-log';
import { errorHandler } from './http/error-handler';
import { requestContext } from './http/request-context';
import { createLogger } from './logger';
import { apiRoutes } from './routes/api';
import { documentRoutes } from './routes/documents';
import { createServices, type Services } from './services';

export interface AppOptions {
  logger?: Logger;
  /** Services built by the caller, who then closes them; by default the app builds its own. */
  services?: Services;
}

/** Builds the HTTP application on an open, migrated database; listening is the caller's business. */
export function createApp(config: Config, db: Db, options: AppOptions = {}): Express {
  const logger = options.logger ?? createLogger(config.logLevel);
  const services = options.services ?? createServices(config, db, { logger });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestContext);
  app.use(accessLog(logger));
  app.use(helmet());
  app.use(documentRoutes(serializeDocument(services.contract), db));
  app.use(apiRoutes(services));
  app.use(errorHandler(logger));
  return app;
}

import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { Router as createRouter } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { middlewareDocument } from '../contract/document';
import type { OpenApiDocument } from '../contract/document-source';
import { exportTimeline, listTimeline, listTimelineWorkers } from '../handlers/console/timeline';
import { getWorker, listWorkers, listWorkerSnapshots } from '../handlers/console/workers';
import { getDailyStatistics, getSummaryReport, listRollupStatistics } from '../handlers/console/statistics';
import { ingestEvents } from '../handlers/ingest/ingest-events';
import { ingestSnapshot } from '../handlers/ingest/ingest-snapshot';
import { ping } from '../handlers/ingest/ping';
import { acceptInvite, createSession, deleteSession, getInvite, getMe } from '../handlers/console/session';
import { getStatistics, putStatistics } from '../handlers/ingest/statistics';
import { createApp, getApp, getAppStatistics, listApps, putAllowedEventTypes, putAppStatistics } from '../handlers/console/apps';
import { issueKey, listKeys, revokeKey } from '../handlers/console/keys';
import { inviteMember, listMembers, removeMember, updateMember } from '../handlers/console/members';
import { getOrganization, listAuditLog, updateOrganization } from '../handlers/console/organization';
import { authenticate } from '../http/authenticate';
import { consoleSession } from '../http/console-session';
import { enforceBatchLimit } from '../http/batch-limit';
import { ingestCors } from '../http/cors';
import { idempotency } from '../http/idempotency';
import { jsonBody } from '../http/json-body';
import { mountOperations, type Handlers } from '../http/operation';
import { rateLimit } from '../http/rate-limit';
import { requireTls } from '../http/require-tls';
import type { Services } from '../services';
import { ApiError } from '../errors';

/**
 * Everything under /api/v1, in the order of checks the contract documents.
 * The console (/api/v1/console) has its own front door, the session cookie
 * and CSRF check, instead of the ingest endpoints' key, rate limits and CORS.
 */
export function apiRoutes(services: Services): Router {
  const doc = services.contract;
  const router = createRouter();
  const apiVersion = String(doc.info['x-api-version']);

  router.use('/api/v1', (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('X-API-Version', apiVersion);
    next();
  });
  if (services.config.requireTls) router.use('/api', requireTls);
  router.use('/api/v1/ingest', ingestCors);
  router.use('/api/v1/console', consoleSession(services.sessions, doc));
  router.use('/api/v1', exceptConsole(authenticate(services.authenticator)));
  router.use('/api/v1', exceptConsole(rateLimit(services.rateLimiter)));
  router.use('/api/v1', jsonBody);
  router.post(['/api/v1/ingest/events', '/api/v1/ingest/snapshots'], idempotency(services.idempotency));
  router.use('/api/v1/ingest/events', enforceBatchLimit(services.config.ingestBatchLimit));
  // One validator for the console's paths, one for the rest: the validator finds a request's route by trying
  // every path of its document in turn, compiling each pattern anew, and the console's sort before the ingest
  // endpoints: more than half of what the validator cost an ingest request went to it (measured).
  const ingestSide = contractValidator(doc, (path) => !CONSOLE_PATH.test(path));
  const consoleSide = contractValidator(doc, (path) => CONSOLE_PATH.test(path));
  router.use((req: Request, res: Response, next: NextFunction) => (isConsole(req) ? consoleSide : ingestSide)(req, res, next));
  router.use('/api/v1', refuseNonFiniteQuery);
  mountOperations(router, doc, handlers(services));
  return router;
}

/** The handler of every operation in the contract, by operationId. */
function handlers(services: Services): Handlers {
  return {
    ping: ping(),
    ingestEvents: ingestEvents(services),
    ingestSnapshot: ingestSnapshot(services),
    getStatistics: getStatistics(services),
    putStatistics: putStatistics(services),
    createSession: createSession(services),
    getMe: getMe(services),
    deleteSession: deleteSession(services),
    getInvite: getInvite(services),
    acceptInvite: acceptInvite(services),
    listApps: listApps(services),
    createApp: createApp(services),
    getApp: getApp(services),
    putAllowedEventTypes: putAllowedEventTypes(services),
    getAppStatistics: getAppStatistics(services),
    putAppStatistics: putAppStatistics(services),
    listKeys: listKeys(services),
    issueKey: issueKey(services),
    revokeKey: revokeKey(services),
    listMembers: listMembers(services),
    inviteMember: inviteMember(services),
    updateMember: updateMember(services),
    removeMember: removeMember(services),
    getOrganization: getOrganization(services),
    updateOrganization: updateOrganization(services),
    listAuditLog: listAuditLog(services),
    listTimeline: listTimeline(services),
    listTimelineWorkers: listTimelineWorkers(services),
    exportTimeline: exportTimeline(services),
    listWorkers: listWorkers(services),
    getWorker: getWorker(services),
    listWorkerSnapshots: listWorkerSnapshots(services),
    listRollupStatistics: listRollupStatistics(services),
    getDailyStatistics: getDailyStatistics(services),
    getSummaryReport: getSummaryReport(services),
  };
}

/**
 * The middleware's Ajv coerces a numeric query literal beyond a double (limit=1e400) to
 * Infinity and lets it through its range checks: refused here as they would have been.
 */
function refuseNonFiniteQuery(req: Request, _res: Response, next: NextFunction): void {
  for (const [name, value] of Object.entries(req.query)) {
    if (typeof value === 'number' && !Number.isFinite(value))
      throw new ApiError('invalid_query', `query parameter ${name} must be a finite number`);
  }
  next();
}

/** express-openapi-validator enforcing the contract's paths that `keep` keeps. */
function contractValidator(doc: OpenApiDocument, keep: (path: string) => boolean): Router {
  return createRouter().use(
    OpenApiValidator.middleware({
      apiSpec: middlewareDocument(doc, keep),
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: false,
      validateSecurity: false,
      ajvFormats: { mode: 'full' },
    }),
  );
}

const CONSOLE_PATH = /^\/api\/v1\/console(\/|$)/;

function isConsole(req: Request): boolean {
  return CONSOLE_PATH.test(req.baseUrl + req.path);
}

/** A middleware of the ingest endpoints that console requests pass by. */
function exceptConsole(handler: RequestHandler): RequestHandler {
  return (req, res, next) => (isConsole(req) ? next() : handler(req, res, next));
}

import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { redactKeys } from '../domain/api-keys';

/**
 * One line per request with its id; serializers keep headers (the key), query
 * strings and bodies (metadata) out, and a key pasted into the path is redacted.
 * Below info level there are no access lines to write, so none of their
 * per-request work is done (failures are logged where handled).
 */
export function accessLog(logger: Logger): RequestHandler {
  if (!logger.isLevelEnabled('info')) return (_req, _res, next) => next();
  return pinoHttp({
    logger,
    genReqId: (req) => (req as unknown as { requestId: string }).requestId,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    serializers: {
      // The client as TRUST_PROXY says: the proxy's X-Forwarded-For and X-Forwarded-Proto, or the socket's peer.
      req: (req: { id: string; method: string; url: string; raw: Request }) => ({
        id: req.id,
        method: req.method,
        path: redactKeys(req.url.split('?')[0] as string),
        ip: req.raw.ip,
        protocol: req.raw.protocol,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}

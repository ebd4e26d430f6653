import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

/** One line per request with its id; serializers keep headers (the key) and bodies (metadata) out. */
export function accessLog(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: (req) => (req as unknown as { requestId: string }).requestId,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}

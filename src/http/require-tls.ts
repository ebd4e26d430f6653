import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors';

/**
 * REQUIRE_TLS: an API request that arrived over plain HTTP is refused before
 * authentication, so that nothing it sent is acted upon. Behind a proxy that
 * terminates TLS, req.secure comes from its X-Forwarded-Proto (TRUST_PROXY).
 */
export function requireTls(req: Request, _res: Response, next: NextFunction): void {
  if (!req.secure) throw new ApiError('tls_required');
  next();
}

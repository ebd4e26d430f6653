import { parse as parseCookies } from 'cookie';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { OpenApiDocument } from '../contract/document-source';
import type { MemberRole } from '../data/schema';
import { ConsoleSessions } from '../domain/sessions';
import { ApiError } from '../errors';

export const SESSION_COOKIE = 'ingest_session';
export const CONSOLE_PREFIX = '/api/v1/console';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Every console request but those the contract marks `security: []` (sign-in,
 * invites) needs a live session: its member becomes `req.member`. A request
 * that changes something must also carry the session's X-CSRF-Token; both are
 * checked before the body is read, so a refused request changes nothing.
 */
export function consoleSession(sessions: ConsoleSessions, doc: OpenApiDocument): RequestHandler {
  const isPublic = publicOperations(doc);
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    if (isPublic(req.method, req.baseUrl + req.path)) return next();
    const token = parseCookies(req.get('cookie') ?? '')[SESSION_COOKIE];
    const { principal, csrfToken } = await sessions.authenticate(token);
    if (!SAFE_METHODS.has(req.method) && !ConsoleSessions.csrfMatches(req.get('x-csrf-token'), csrfToken)) {
      throw new ApiError('csrf_failed');
    }
    req.member = principal;
    req.csrfToken = csrfToken;
    next();
  };
}

/** The console operations the contract opens to anyone (`security: []`), as a matcher of method and path. */
function publicOperations(doc: OpenApiDocument): (method: string, path: string) => boolean {
  const open: Array<{ method: string; pattern: RegExp }> = [];
  for (const [path, pathItem] of Object.entries<OpenApiDocument>(doc.paths)) {
    if (!path.startsWith(`${CONSOLE_PREFIX}/`)) continue;
    for (const [method, operation] of Object.entries<OpenApiDocument>(pathItem)) {
      if (Array.isArray(operation?.security) && operation.security.length === 0) {
        open.push({ method: method.toUpperCase(), pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`) });
      }
    }
  }
  return (method, path) => open.some((op) => op.method === method && op.pattern.test(path));
}

/** The operation's `x-roles`: a member whose role is not listed gets 403 insufficient_role. */
export function requireRole(roles: readonly MemberRole[]): RequestHandler {
  return (req, _res, next) => {
    if (!req.member || !roles.includes(req.member.role)) throw new ApiError('insufficient_role');
    next();
  };
}

/** The session cookie: HttpOnly, SameSite=Strict, Path=/, and Secure when the request came over TLS. */
export function setSessionCookie(req: Request, res: Response, token: string): void {
  res.cookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: '/', secure: req.secure });
}

export function clearSessionCookie(req: Request, res: Response): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', path: '/', secure: req.secure });
}

import type { NextFunction, Request, Response } from 'express';
import type { Authenticator } from '../domain/authenticator';

/** Runs before the body is read: an unauthenticated client never gets to upload. */
export function authenticate(authenticator: Authenticator) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    req.principal = await authenticator.authenticate(req.get('authorization'));
    next();
  };
}

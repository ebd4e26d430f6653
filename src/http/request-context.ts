import type { NextFunction, Request, Response } from 'express';
import { newId } from '../data/ids';

/** Gives every request its id and X-Request-Id before anything else can answer. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  req.requestId = newId('req');
  res.setHeader("X-Request-Id", req.requestId);
  next();
}

/** The address clients reached us at, for links such as docsUrl. */
export function baseUrlOf(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors';

/** More events than the configured limit is 413, checked before the envelope schema (which would say 400). */
export function enforceBatchLimit(limit: number) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const events = (req.body as { events?: unknown } | undefined)?.events;
    if (Array.isArray(events) && events.length > limit) {
      throw new ApiError('batch_too_large', `The batch has ${events.length} events; the limit is ${limit}.`);
    }
    next();
  };
}

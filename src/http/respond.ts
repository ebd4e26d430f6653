import type { Request, Response } from 'express';
import { errorDetail, type ErrorCode } from '../errors';
import { baseUrlOf } from './request-context';

/** Serializes once so the exact bytes can also be stored for idempotent replay. */
export function sendJson(res: Response, status: number, body: unknown): string {
  const text = JSON.stringify(body);
  res.status(status).type('application/json').send(text);
  return text;
}

export function errorDetailFor(req: Request, code: ErrorCode, message: string) {
  return errorDetail(code, message, req.requestId, baseUrlOf(req));
}

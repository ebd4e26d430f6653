import type { Request, Response } from 'express';
import { errorDetail, type ErrorCode } from '../errors';
import { baseUrlOf } from './request-context';
import type { Executor } from '../data/schema';

export function sendJson(res: Response, status: number, body: unknown): void {
  sendReply(res, { status, body: JSON.stringify(body) });
}

export function errorDetailFor(req: Request, code: ErrorCode, message: string) {
  return errorDetail(code, message, req.requestId, baseUrlOf(req));
}

/** A response decided inside the transaction that commits what it describes. */
export interface Reply {
  status: number;
  body: string;
}

/**
 * The last step of a request's transaction: renders the reply and, when the
 * request holds an Idempotency-Key, stores it in that same transaction.
 */
export function replyWithin<T>(req: Request, render: (outcome: T) => Reply) {
  return async (trx: Executor, outcome: T): Promise<Reply> => {
    const reply = render(outcome);
    await req.idempotency?.complete(trx, { ...reply, requestId: req.requestId });
    return reply;
  };
}

/** Sends a body that is already JSON text: as rendered in a transaction, or as stored for replay. */
export function sendReply(res: Response, reply: Reply): void {
  res.status(reply.status).type('application/json').send(reply.body);
}

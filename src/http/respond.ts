import type { Request, Response } from 'express';
import { errorDetail, type ErrorCode } from '../errors';
import { baseUrlOf } from './request-context';
import type { Db } from '../data/db';
import type { UnitOfWork } from '../data/transaction';

export function sendJson(res: Response, status: number, body: unknown): void {
  sendReply(res, { status, body: JSON.stringify(body) });
}

export function errorDetailFor(req: Request, code: ErrorCode, message: string) {
  return errorDetail(code, message, req.requestId, baseUrlOf(req.socket, { protocol: req.protocol, host: req.get('host') }));
}

/** A response decided inside the transaction that commits what it describes. */
export interface RenderedReply {
  status: number;
  body: string;
}

/**
 * Runs a request's unit of work in one transaction, renders its outcome and,
 * when the request holds an Idempotency-Key, stores the rendered reply in that
 * same transaction: the reply a retry gets back commits with the data it
 * describes, or neither does. Returns both once committed, for the caller to send the reply.
 */
export async function commitWithReply<T>(
  req: Request,
  db: Db,
  work: UnitOfWork<T>,
  render: (outcome: T) => RenderedReply,
): Promise<{ outcome: T; reply: RenderedReply }> {
  return db.transaction(async (trx) => {
    const outcome = await work(trx);
    const reply = render(outcome);
    await req.idempotency?.complete(trx, { ...reply, requestId: req.requestId });
    return { outcome, reply };
  });
}

/** Sends a body that is already JSON text: as rendered in a transaction, or as stored for replay. */
export function sendReply(res: Response, reply: RenderedReply): void {
  res.status(reply.status).type('application/json').send(reply.body);
}

import type { Request, Response } from 'express';
import { errorDetail, type ErrorCode } from '../errors';
import { JsonBytes } from './json-bytes';
import { baseUrlOf } from './request-context';
import type { Db } from '../data/db';
import type { UnitOfWork } from '../data/transaction';
import { withStoredReply, type ClaimTicket, type RenderedReply } from '../domain/idempotency';

export type { RenderedReply };

export function sendJson(res: Response, status: number, body: unknown): void {
  sendReply(res, { status, body: JSON.stringify(body) });
}

export function errorDetailFor(req: Request, code: ErrorCode, message: string) {
  return errorDetail(code, message, req.requestId, baseUrlFor(req));
}

/** The address the client reached us at, for links such as docsUrl. */
export function baseUrlFor(req: Request): string {
  return baseUrlOf(req.socket, { protocol: req.protocol, host: req.get('host') });
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
  return committedWithClaim(req, (claim) => db.transaction((trx) => withStoredReply(trx, work, render, claim, req.requestId)));
}

/**
 * Runs `commit`, a transaction that stores the request's reply with the
 * ticket of its Idempotency-Key claim (storeReply), and marks the claim done once that committed.
 */
export async function committedWithClaim<T>(req: Request, commit: (claim: ClaimTicket | undefined) => Promise<T>): Promise<T> {
  const claim = req.idempotency;
  const done = await commit(claim?.ticket());
  claim?.stored();
  return done;
}

/**
 * Sends JSON written by `write` as bytes, each chunk as soon as it is full (chunked transfer
 * encoding). `write` must not fail: everything that can is done before the answer starts.
 */
export function streamJson(res: Response, status: number, write: (out: JsonBytes) => void): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const out = new JsonBytes((chunk) => res.write(chunk));
  write(out);
  out.end();
  res.end();
}

/**
 * Sends a body that is already JSON text: as rendered in a transaction, or as stored for replay.
 * Written as Express's send would (its Content-Type and Content-Length), without its per-request work
 * for what these answers never have (ETags, freshness, a body of another type).
 */
export function sendReply(res: Response, reply: RenderedReply): void {
  res.statusCode = reply.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(reply.body));
  res.end(reply.body);
}

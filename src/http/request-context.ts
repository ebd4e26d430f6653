import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { newId } from '../data/ids';

/** Gives every request its id and X-Request-Id before anything else can answer. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  req.requestId = newId('req');
  res.setHeader('X-Request-Id', req.requestId);
  next();
}

/**
 * The address a client reached us at, for links such as docsUrl: the Host it
 * named, else (no Host, or no request parsed at all) the connection's local address.
 */
export function baseUrlOf(socket: Socket, request?: { protocol: string; host: string | undefined }): string {
  if (request?.host) return `${request.protocol}://${request.host}`;
  const address = socket.localAddress?.includes(':') ? `[${socket.localAddress}]` : socket.localAddress;
  return `${request?.protocol ?? 'http'}://${address ?? 'localhost'}:${socket.localPort ?? ''}`;
}

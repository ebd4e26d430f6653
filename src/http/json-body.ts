import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import contentType from 'content-type';
import type { NextFunction, Request, Response } from 'express';
import getRawBody from 'raw-body';
import { ApiError } from '../errors';

export const BODY_LIMIT_BYTES = 1024 * 1024;

const decoders: Record<string, (() => zlib.Gunzip | zlib.Inflate) | undefined> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
};

/**
 * Reads a JSON body of at most 1 MB, counted after decompression (gzip and
 * deflate accepted). Unlike body-parser, which drains the whole upload before
 * answering 413, a body over the limit is refused as soon as that is known:
 * from Content-Length before reading, or at the first byte past the limit,
 * and the connection is closed instead of reading the rest. The raw bytes
 * and their SHA-256 are kept for idempotency and ordered parsing.
 */
export async function jsonBody(req: Request, res: Response, next: NextFunction): Promise<void> {
  if (!hasBody(req) || !isJson(req)) return next();
  const encoding = (req.get('content-encoding') ?? 'identity').trim().toLowerCase();
  const decoder = encoding === 'identity' ? undefined : decoders[encoding];
  if (encoding !== 'identity' && !decoder) {
    throw new ApiError('unsupported_media_type', 'Content-Encoding must be gzip, deflate or identity.');
  }
  const declared = Number(req.get('content-length') ?? NaN);
  if (!decoder && declared > BODY_LIMIT_BYTES) refuseTooLarge(req, res);

  const source: Readable = decoder ? req.pipe(decoder()) : req;
  let raw: Buffer;
  try {
    raw = await getRawBody(source, { limit: BODY_LIMIT_BYTES, length: decoder || Number.isNaN(declared) ? undefined : declared });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') refuseTooLarge(req, res);
    if ((err as { code?: string }).code?.startsWith('Z_')) throw new ApiError('invalid_body', `The ${encoding} body could not be decompressed.`);
    if (type === 'request.aborted' || type === 'request.size.invalid') throw new ApiError('invalid_body', 'The request body was not received completely.');
    throw err;
  } finally {
    if (decoder) req.unpipe();
  }
  try {
    req.body = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_body', `The request body is not valid JSON: ${(err as Error).message}`);
  }
  req.rawBody = raw;
  req.bodyFingerprint = createHash('sha256').update(raw).digest('hex');
  next();
}

// After an early 413 the connection is drained this long, then dropped. Closing at
// once (Connection: close) would reset it while the client is still sending, and a
// reset can discard the 413 before the client reads it.
const LINGER_AFTER_REFUSAL_MS = 1000;

function refuseTooLarge(req: Request, res: Response): never {
  // Answer now: the client is not made to upload the rest before it hears 413.
  req.unpipe();
  res.once('finish', () => {
    req.resume();
    setTimeout(() => req.socket.destroy(), LINGER_AFTER_REFUSAL_MS).unref();
  });
  throw new ApiError('batch_too_large', `The request body is larger than ${BODY_LIMIT_BYTES} bytes (1 MB, after decompression).`);
}

function hasBody(req: Request): boolean {
  return req.get('transfer-encoding') !== undefined || Number(req.get('content-length') ?? 0) > 0;
}

function isJson(req: Request): boolean {
  const header = req.get('content-type');
  if (!header) return false;
  try {
    const { type, parameters } = contentType.parse(header);
    if (type !== 'application/json' && !/^application\/[^/]+\+json$/.test(type)) return false;
    if (parameters.charset && parameters.charset.toLowerCase() !== 'utf-8') {
      throw new ApiError('unsupported_media_type', 'The request body must be UTF-8 JSON.');
    }
    return true;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    return false;
  }
}

import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import contentType from 'content-type';
import type { NextFunction, Request, Response } from 'express';
import getRawBody from 'raw-body';
import { ApiError } from '../errors';
import { lingeringClose } from './lingering-close';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * How deep arrays and objects may nest in a body. Validation and storage walk
 * values recursively (JSON.stringify among them), and a few KB of brackets
 * nested thousands deep would exhaust the stack; 64 levels leave ample room
 * for real metadata.
 */
export const MAX_NESTING_DEPTH = 64;

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
  const { depth, nonFinite } = inspectJson(raw);
  if (depth > MAX_NESTING_DEPTH) {
    throw new ApiError('invalid_body', `The request body nests arrays and objects deeper than ${MAX_NESTING_DEPTH} levels.`);
  }
  if (nonFinite !== undefined) {
    throw new ApiError('invalid_body', `The request body has the number ${nonFinite.slice(0, 40)}, beyond the range of a double (about ±1.8e308).`);
  }
  req.rawBody = raw;
  req.bodyFingerprint = createHash('sha256').update(raw).digest('hex');
  next();
}

function refuseTooLarge(req: Request, res: Response): never {
  // Answer now and close: the client is not made to upload the rest; what is already on its way is dropped.
  req.unpipe();
  req.resume();
  res.setHeader('Connection', 'close');
  // Node ends a `Connection: close` answer with destroySoon, which would reset the connection under the upload.
  req.socket.destroySoon = () => lingeringClose(req.socket);
  throw new ApiError('batch_too_large', `The request body is larger than ${BODY_LIMIT_BYTES} bytes (1 MB, after decompression).`);
}

/** The bytes a JSON number literal is made of: digits, "-", "+", ".", "e" and "E". */
const NUMBER_BYTES = new Set(Buffer.from('0123456789-+.eE'));

/**
 * What JSON.parse does not tell about valid JSON text: the deepest nesting of
 * arrays and objects, and the first number literal beyond a double, which it
 * would turn into Infinity (stored as null). One pass, without recursion.
 */
function inspectJson(json: Buffer): { depth: number; nonFinite?: string } {
  let depth = 0;
  let deepest = 0;
  let nonFinite: string | undefined;
  let inString = false;
  // Every byte of a multi-byte UTF-8 character is >= 0x80, so the ASCII bytes below are always themselves.
  for (let i = 0; i < json.length; i++) {
    const byte = json[i] as number;
    if (inString) {
      if (byte === 0x5c) i++; // backslash: the next byte is escaped
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) {
      inString = true;
    } else if (byte === 0x5b || byte === 0x7b) {
      deepest = Math.max(deepest, ++depth);
    } else if (byte === 0x5d || byte === 0x7d) {
      depth--;
    } else if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) {
      let end = i + 1;
      while (end < json.length && NUMBER_BYTES.has(json[end] as number)) end++;
      const literal = json.toString('latin1', i, end);
      if (nonFinite === undefined && !Number.isFinite(Number(literal))) nonFinite = literal;
      i = end - 1;
    }
  }
  return { depth: deepest, nonFinite };
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

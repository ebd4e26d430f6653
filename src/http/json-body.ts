import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import contentType from 'content-type';
import type { NextFunction, Request, Response } from 'express';
import getRawBody from 'raw-body';
import { maxBodyBytes, maxNestingDepth, requestMediaTypes } from '../contract/constants';
import { ApiError } from '../errors';
import { lingeringClose } from './lingering-close';

const decoders: Record<string, (() => zlib.Gunzip | zlib.Inflate) | undefined> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
};

/**
 * Reads a JSON body of at most maxBodyBytes, counted after decompression (gzip and
 * deflate accepted). Unlike body-parser, which drains the whole upload before
 * answering 413, a body over the limit is refused as soon as that is known:
 * from Content-Length before reading, or at the first byte past the limit,
 * and the connection is closed instead of reading the rest. The raw bytes
 * are kept for idempotency and ordered parsing.
 */
export async function jsonBody(req: Request, res: Response, next: NextFunction): Promise<void> {
  if (!hasBody(req)) return next();
  // A body in a type the contract does not take (a content type that does not even parse included) is refused
  // here, before an Idempotency-Key is claimed: a retry in the right type must not get this refusal back.
  if (!isJson(req)) throw new ApiError('unsupported_media_type');
  const encoding = (req.get('content-encoding') ?? 'identity').trim().toLowerCase();
  const decoder = encoding === 'identity' ? undefined : decoders[encoding];
  if (encoding !== 'identity' && !decoder) {
    throw new ApiError('unsupported_media_type', 'Content-Encoding must be gzip, deflate or identity.');
  }
  const declared = Number(req.get('content-length') ?? NaN);
  if (!decoder && declared > maxBodyBytes) refuseTooLarge(req, res);

  const source: Readable = decoder ? req.pipe(decoder()) : req;
  let raw: Buffer;
  try {
    raw = await getRawBody(source, { limit: maxBodyBytes, length: decoder || Number.isNaN(declared) ? undefined : declared });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') refuseTooLarge(req, res);
    if ((err as { code?: string }).code?.startsWith('Z_'))
      throw new ApiError('invalid_body', `The ${encoding} body could not be decompressed.`);
    if (type === 'request.aborted' || type === 'request.size.invalid')
      throw new ApiError('invalid_body', 'The request body was not received completely.');
    throw err;
  } finally {
    if (decoder) req.unpipe();
  }
  try {
    req.body = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new ApiError('invalid_body', `The request body is not valid JSON: ${(err as Error).message}`);
  }
  // Validation and storage walk values recursively (JSON.stringify among them): a few KB of brackets
  // nested thousands deep would exhaust the stack, so nesting is bounded before anything walks it.
  const { depth, nonFinite } = inspectJson(raw);
  if (depth > maxNestingDepth) {
    throw new ApiError('invalid_body', `The request body nests arrays and objects deeper than ${maxNestingDepth} levels.`);
  }
  if (nonFinite !== undefined) {
    throw new ApiError(
      'invalid_body',
      `The request body has the number ${nonFinite.slice(0, 40)}, beyond the range of a double (about ±1.8e308).`,
    );
  }
  req.rawBody = raw;
  next();
}

function refuseTooLarge(req: Request, res: Response): never {
  // Answer now and close: the client is not made to upload the rest; what is already on its way is dropped.
  req.unpipe();
  req.resume();
  res.setHeader('Connection', 'close');
  // Node ends a `Connection: close` answer with destroySoon, which would reset the connection under the upload.
  req.socket.destroySoon = () => lingeringClose(req.socket);
  throw new ApiError(
    'batch_too_large',
    `The request body is larger than ${maxBodyBytes} bytes (${maxBodyBytes / 1024 / 1024} MB, after decompression).`,
  );
}

/** The bytes a JSON number literal is made of: digits, "-", "+", ".", "e" and "E". */
const NUMBER_BYTE = new Uint8Array(256);
for (const byte of Buffer.from('0123456789-+.eE')) NUMBER_BYTE[byte] = 1;
/** A literal without an exponent and at most this long is below 1e308: finite without looking closer. */
const PLAIN_FINITE_LENGTH = 308;

/**
 * What JSON.parse does not tell about valid JSON text: the deepest nesting of
 * arrays and objects, and the first number literal beyond a double, which it
 * would turn into Infinity (stored as null). One pass, without recursion;
 * strings, most of a body, are skipped by a native search for their closing quote.
 */
function inspectJson(json: Buffer): { depth: number; nonFinite?: string } {
  let depth = 0;
  let deepest = 0;
  let nonFinite: string | undefined;
  // Every byte of a multi-byte UTF-8 character is >= 0x80, so the ASCII bytes below are always themselves.
  for (let i = 0; i < json.length; i++) {
    const byte = json[i] as number;
    if (byte === 0x22) {
      i = closingQuote(json, i);
    } else if (byte === 0x5b || byte === 0x7b) {
      deepest = Math.max(deepest, ++depth);
    } else if (byte === 0x5d || byte === 0x7d) {
      depth--;
    } else if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) {
      let end = i + 1;
      let exponent = false;
      for (; end < json.length && NUMBER_BYTE[json[end] as number] === 1; end++) {
        if (json[end] === 0x65 || json[end] === 0x45) exponent = true;
      }
      if (nonFinite === undefined && (exponent || end - i > PLAIN_FINITE_LENGTH)) {
        const literal = json.toString('latin1', i, end);
        if (!Number.isFinite(Number(literal))) nonFinite = literal;
      }
      i = end - 1;
    }
  }
  return { depth: deepest, nonFinite };
}

/** The index of the quote closing the string opened at `open`: one not escaped by an odd run of backslashes. */
function closingQuote(json: Buffer, open: number): number {
  for (let quote = json.indexOf(0x22, open + 1); quote !== -1; quote = json.indexOf(0x22, quote + 1)) {
    let backslashes = 0;
    while (json[quote - 1 - backslashes] === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return json.length;
}

function hasBody(req: Request): boolean {
  return req.get('transfer-encoding') !== undefined || Number(req.get('content-length') ?? 0) > 0;
}

function isJson(req: Request): boolean {
  const header = req.get('content-type');
  if (!header) return false;
  try {
    const { type, parameters } = contentType.parse(header);
    if (!requestMediaTypes.has(type)) return false;
    if (parameters.charset && parameters.charset.toLowerCase() !== 'utf-8') {
      throw new ApiError('unsupported_media_type', 'The request body must be UTF-8 JSON.');
    }
    return true;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    return false;
  }
}

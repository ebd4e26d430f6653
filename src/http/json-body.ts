import { createHash } from 'node:crypto';
import express from 'express';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * JSON bodies up to 1 MB. The limit counts decompressed bytes (gzip and deflate
 * are accepted), a declared Content-Length above it is refused before reading,
 * and the raw bytes are fingerprinted for idempotency.
 */
export const jsonBody = express.json({
  limit: BODY_LIMIT_BYTES,
  inflate: true,
  strict: true,
  type: ['application/json', 'application/*+json'],
  verify: (req, _res, raw) => {
    const request = req as express.Request;
    request.rawBody = raw;
    request.bodyFingerprint = createHash('sha256').update(raw).digest('hex');
  },
});

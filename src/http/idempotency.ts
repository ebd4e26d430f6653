import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { IdempotencyService } from '../domain/idempotency';
import { ApiError } from '../errors';
import { sendReply } from './respond';

const MAX_KEY_LENGTH = 200;

/**
 * Replays the stored response of an earlier request with the same (API key,
 * Idempotency-Key), or claims the key for this request (req.idempotency).
 * Runs after the body is read, before the envelope is checked.
 */
export function idempotency(service: IdempotencyService) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = req.get('idempotency-key');
    if (key === undefined) return next();
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new ApiError('invalid_body', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters, got ${key.length}.`);
    }
    const fingerprint = createHash('sha256').update(`${req.method} ${req.path}\n${req.bodyFingerprint ?? ''}`).digest('hex');
    const begun = await service.begin({ apiKeyId: req.principal.keyId, idempotencyKey: key }, fingerprint);
    if ('replay' in begun) {
      const { status, body, requestId } = begun.replay;
      res.setHeader('X-Request-Id', requestId);
      res.setHeader('Idempotent-Replayed', 'true');
      sendReply(res, { status, body });
      return;
    }
    req.idempotency = begun.claim;
    res.once('close', () => void begun.claim.finished().catch(() => {}));
    next();
  };
}

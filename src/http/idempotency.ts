import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { idempotencyKeyMaxLength } from '../contract/constants';
import type { IdempotencyService } from '../domain/idempotency';
import { ApiError } from '../errors';
import { metrics } from '../metrics';
import { sendReply } from './respond';

/**
 * Replays the stored response of an earlier request with the same (API key,
 * Idempotency-Key), or claims the key for this request (req.idempotency).
 * Runs after the body is read, before the envelope is checked.
 */
export function idempotency(service: IdempotencyService) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = req.get('idempotency-key');
    if (key === undefined) return next();
    if (key.length === 0 || key.length > idempotencyKeyMaxLength) {
      throw new ApiError('invalid_body', `Idempotency-Key must be 1 to ${idempotencyKeyMaxLength} characters, got ${key.length}.`);
    }
    // Hashed only here: most requests carry no Idempotency-Key, and their bodies need no hash.
    const bodyHash = req.rawBody ? createHash('sha256').update(req.rawBody).digest('hex') : '';
    const fingerprint = createHash('sha256').update(`${req.method} ${req.path}\n${bodyHash}`).digest('hex');
    const begun = await service.begin({ apiKeyId: req.principal.keyId, idempotencyKey: key }, fingerprint);
    if ('replay' in begun) {
      const { status, body, requestId } = begun.replay;
      res.setHeader('X-Request-Id', requestId);
      res.setHeader('Idempotent-Replayed', 'true');
      metrics.idempotentReplays.inc();
      sendReply(res, { status, body });
      return;
    }
    req.idempotency = begun.claim;
    res.once('close', () => void begun.claim.finished().catch(() => {}));
    next();
  };
}

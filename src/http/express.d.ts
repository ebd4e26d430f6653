import type { Principal } from '../domain/authenticator';
import type { IdempotencyClaim } from '../domain/idempotency';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Opaque id of this request, sent back as X-Request-Id. */
      requestId: string;
      /** The authenticated key's app and organization (on /api/v1 after authentication). */
      principal: Principal;
      /** SHA-256 of the raw request body, when one was read. */
      bodyFingerprint?: string;
      /** The raw (decompressed) request body, when one was read. */
      rawBody?: Buffer;
      /** This request's hold on its Idempotency-Key, when it sent one. */
      idempotency?: IdempotencyClaim;
    }
  }
}

export {};

import type { Principal } from '../domain/authenticator';
import type { IdempotencyClaim } from '../domain/idempotency';
import type { MemberPrincipal } from '../domain/sessions';

declare global {
  namespace Express {
    interface Request {
      /** Opaque id of this request, sent back as X-Request-Id. */
      requestId: string;
      /** The authenticated key's app and organization (on /api/v1 after authentication). */
      principal: Principal;
      /** The signed-in member (on /api/v1/console after the session check, except sign-in and invites). */
      member: MemberPrincipal;
      /** The session's CSRF token, beside `member`. */
      csrfToken: string;
      /** The raw (decompressed) request body, when one was read. */
      rawBody?: Buffer;
      /** This request's hold on its Idempotency-Key, when it sent one. */
      idempotency?: IdempotencyClaim;
    }
  }
}

export {};

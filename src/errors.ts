import { actorKeys, maxBodyBytes } from './contract/constants';
import { sourceDocument } from './contract/document-source';
import type { Schema } from './contract/types';

export type ErrorCode = Schema<'ErrorCode'>;

/** Every code's default message; the compiler refuses a code of the contract without one. */
const messages = {
  missing_authorization: 'Send the API key as "Authorization: Bearer <API_KEY>".',
  invalid_key: 'The API key is not valid.',
  key_revoked: 'The API key was revoked.',
  key_expired: 'The API key has expired.',
  plan_disabled: "The organization's plan does not include the developer API.",
  quota_exceeded: "The organization's monthly event quota is exhausted.",
  plan_limit: "A limit of the organization's plan was reached.",
  rate_limited: 'Too many requests; retry after Retry-After seconds.',
  forbidden_event_type: "The eventType is not in the app's allowedEventTypes.",
  invalid_body: 'The request body is not valid.',
  batch_too_large: `The request body is larger than ${maxBodyBytes / 1024 / 1024} MB.`,
  missing_actor: `The actor needs at least one of ${actorKeys.join(', ')}.`,
  worker_not_found: 'The workerId is not a worker of this organization.',
  idempotency_in_progress: 'A request with this Idempotency-Key is still being processed.',
  idempotency_key_reused: 'This Idempotency-Key was already used with a different method, path or body.',
  not_found: 'No such endpoint.',
  method_not_allowed: 'This endpoint does not support this method.',
  unsupported_media_type: 'Send the request body as application/json.',
  request_timeout: 'The request was not received in time; retry.',
  headers_too_large: 'The request headers are too large.',
  internal_error: 'Unexpected failure; nothing was changed. Retry with backoff.',
  service_unavailable: 'A dependency is unavailable; nothing was changed. Retry later.',
  invalid_query: 'A query parameter is not valid.',
  session_required: 'Sign in first: this endpoint needs a console session.',
  session_expired: 'The session has ended; sign in again.',
  invalid_credentials: 'The email or password is not correct.',
  invite_invalid: 'This invite link is not valid any more; ask for a new one.',
  csrf_failed: "Send the session's X-CSRF-Token with every change; nothing was changed.",
  insufficient_role: 'Your role in this organization does not allow this.',
  app_not_found: 'No such app in this organization.',
  key_not_found: 'No such key on this app.',
  member_not_found: 'No such member in this organization.',
  slug_taken: 'Another app of this organization has this slug.',
  last_owner: 'The organization must keep at least one owner.',
  tls_required: 'This service accepts API requests over HTTPS only.',
  member_exists: 'This email is already a member of the organization.',
} as const satisfies Record<ErrorCode, string>;

/** Each code's HTTP status, as the contract gives it (`ErrorCode.x-status`), checked for every code at load. */
const statuses = contractStatuses();

function contractStatuses(): Map<string, number> {
  const declared: unknown = sourceDocument().components.schemas.ErrorCode['x-status'];
  const table = new Map(declared !== null && typeof declared === 'object' ? Object.entries(declared) : []);
  const checked = new Map<string, number>();
  for (const code of errorCodes()) {
    const status: unknown = table.get(code);
    if (typeof status !== 'number' || !Number.isInteger(status)) throw new Error(`openapi/v1.yaml: ErrorCode ${code} has no x-status`);
    checked.set(code, status);
  }
  return checked;
}

/** Every error code this service answers with: the contract's, as the compiler checks on `messages`. */
export function errorCodes(): string[] {
  return Object.keys(messages);
}

export function messageOf(code: ErrorCode): string {
  return messages[code];
}

/** A failure the client is told about, as a contract error code. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: Schema<'ErrorCode'>,
    message: string = messageOf(code),
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = statusOf(code);
  }
}

export function statusOf(code: ErrorCode): number {
  // Present for every code: contractStatuses() refused to load otherwise.
  return statuses.get(code) ?? 500;
}

function docsUrl(baseUrl: string, code: Schema<'ErrorCode'>): string {
  return `${baseUrl}/docs#section/Errors/${code}`;
}

export function errorDetail(code: Schema<'ErrorCode'>, message: string, requestId: string, baseUrl: string) {
  return { code, message, requestId, docsUrl: docsUrl(baseUrl, code) };
}

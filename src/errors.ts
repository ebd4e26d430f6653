import type { components } from '../generated/openapi';

export type ErrorCode = components['schemas']['ErrorCode'];

interface ErrorSpec {
  status: number;
  message: string;
}

/** The one table mapping every contract error code to its HTTP status and default message. */
export const errorTable = {
  missing_authorization: { status: 401, message: 'Send the API key as "Authorization: Bearer <API_KEY>".' },
  invalid_key: { status: 401, message: 'The API key is not valid.' },
  key_revoked: { status: 401, message: 'The API key was revoked.' },
  key_expired: { status: 401, message: 'The API key has expired.' },
  plan_disabled: { status: 402, message: "The organization's plan does not include the developer API." },
  quota_exceeded: { status: 402, message: "The organization's monthly event quota is exhausted." },
  plan_limit: { status: 402, message: 'A limit of the organization\'s plan was reached.' },
  rate_limited: { status: 429, message: 'Too many requests; retry after Retry-After seconds.' },
  forbidden_event_type: { status: 403, message: "The eventType is not in the app's allowedEventTypes." },
  invalid_body: { status: 400, message: 'The request body is not valid.' },
  batch_too_large: { status: 413, message: 'The request body is larger than 1 MB.' },
  missing_actor: { status: 400, message: 'The actor needs at least one of workerId, externalId, email.' },
  worker_not_found: { status: 404, message: 'The workerId is not a worker of this organization.' },
  idempotency_in_progress: { status: 409, message: 'A request with this Idempotency-Key is still being processed.' },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was already used with a different method, path or body.',
  },
  not_found: { status: 404, message: 'No such endpoint.' },
  method_not_allowed: { status: 405, message: 'This endpoint does not support this method.' },
  unsupported_media_type: { status: 415, message: 'Send the request body as application/json.' },
  request_timeout: { status: 408, message: 'The request was not received in time; retry.' },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  internal_error: { status: 500, message: 'Unexpected failure; nothing was changed. Retry with backoff.' },
  service_unavailable: { status: 503, message: 'A dependency is unavailable; nothing was changed. Retry later.' },
} as const satisfies Record<ErrorCode, ErrorSpec>;

/** A failure the client is told about, as a contract error code. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string = errorTable[code].message,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = errorTable[code].status;
  }
}

export function statusOf(code: ErrorCode): number {
  return errorTable[code].status;
}

export function docsUrl(baseUrl: string, code: ErrorCode): string {
  return `${baseUrl}/docs#section/Errors/${code}`;
}

export function errorDetail(code: ErrorCode, message: string, requestId: string, baseUrl: string) {
  return { code, message, requestId, docsUrl: docsUrl(baseUrl, code) };
}

import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from '../../../generated/openapi';

/** The contract's error body, as every console error answers. */
export interface ErrorBody {
  error: { code: string; message: string; requestId?: string };
}

/** A failed request, thrown by the query hooks: the contract's error code and message, and the HTTP status. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken: string | undefined;
/** The session's CSRF token, from sign-in or /me: sent on every request that changes something. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

const signedOutListeners = new Set<() => void>();
/** Called when the server says the session is gone (401 on any request but sign-in). */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

const maxRetryAfterSeconds = 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** fetch that waits out a 429's Retry-After (twice at most) before giving the answer back. */
async function fetchRespectingRetryAfter(request: Request): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(request.clone());
    const retryAfter = Number(response.headers.get('Retry-After'));
    if (response.status !== 429 || attempt === 2 || !(retryAfter >= 0) || retryAfter > maxRetryAfterSeconds) return response;
    await sleep(retryAfter * 1000);
  }
}

const session: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && csrfToken) request.headers.set('X-CSRF-Token', csrfToken);
    return request;
  },
  async onResponse({ request, response }) {
    const signingIn = request.method === 'POST' && new URL(request.url).pathname.endsWith('/console/session');
    if (response.status === 401 && !signingIn) signedOutListeners.forEach((listener) => listener());
    if (!response.ok) {
      const body = (await response
        .clone()
        .json()
        .catch(() => undefined)) as ErrorBody | undefined;
      throw new ApiFailure(response.status, body?.error?.code ?? 'network', body?.error?.message ?? `HTTP ${response.status}`);
    }
    return response;
  },
};

/** The console API, typed by the contract (generated/openapi.ts): a contract change that breaks a page breaks its type check. */
export const api = createClient<paths>({ baseUrl: window.location.origin, fetch: fetchRespectingRetryAfter, credentials: 'same-origin' });
api.use(session);

import cors from 'cors';

/** Browser callers may reach the ingest endpoints; preflight needs no credentials. Keys stay server-side secrets. */
export const ingestCors = cors({
  origin: '*',
  credentials: false,
  methods: ['GET', 'POST'],
  allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key'],
  exposedHeaders: ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'RateLimit-Policy', 'RateLimit', 'Retry-After', 'X-API-Version'],
  maxAge: 600,
});

import pino, { type Logger } from 'pino';

/** Structured JSON logs. Keys and bodies are never logged: requests are logged by method, path and id only. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'ingest' },
    redact: { paths: ['req.headers.authorization', '*.authorization', '*.key'], censor: '[redacted]' },
  });
}

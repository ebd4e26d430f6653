import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { metrics, registry } from '../metrics';
import { newId } from '../data/ids';
import { ApiError, errorDetail } from '../errors';

interface KnownRoute {
  pattern: string;
  regex: RegExp;
}

/**
 * Counts every answered request and its latency by route pattern. The pattern
 * is the route Express matched; a request refused before reaching one (401,
 * 429, 404…) is labelled with the documented path it was aimed at, or
 * "unmatched", so that a scanner's URLs never become series.
 */
export function httpMetrics(knownPaths: string[]) {
  const known: KnownRoute[] = knownPaths.map((pattern) => ({
    pattern,
    regex: new RegExp(`^${pattern.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
  }));
  const routeOf = (req: Request): string => {
    const matched: unknown = req.route?.path;
    if (typeof matched === 'string') return req.baseUrl + matched;
    return known.find(({ regex }) => regex.test(req.path))?.pattern ?? 'unmatched';
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.once('close', () => {
      const route = routeOf(req);
      const method = METHODS.has(req.method) ? req.method : 'other';
      metrics.httpRequests.inc({ method, route, status: String(res.statusCode) });
      metrics.httpDuration.observe({ method, route }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}

const METHODS = new Set(http.METHODS.filter((m) => ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].includes(m)));

/** GET /metrics on the public port: only for a scraper that presents the configured token. */
export function metricsWithToken(token: string) {
  const expected = Buffer.from(`Bearer ${token}`);
  return async (req: Request, res: Response): Promise<void> => {
    const presented = req.get('authorization');
    if (presented === undefined)
      throw new ApiError('missing_authorization', 'Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".');
    const given = Buffer.from(presented);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ApiError('invalid_key', 'The metrics token is not valid.');
    }
    await sendMetrics(res);
  };
}

async function sendMetrics(res: http.ServerResponse): Promise<void> {
  const text = await registry.metrics();
  res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
  res.end(text);
}

/**
 * The METRICS_PORT listener: GET /metrics and nothing else, without a token,
 * for a port that only the monitoring network reaches.
 */
export function createMetricsServer(): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      sendMetrics(res).catch(() => {
        res.writeHead(500).end();
      });
      return;
    }
    const requestId = newId('req');
    const baseUrl = `http://${req.headers.host ?? 'localhost'}`;
    const body = JSON.stringify({ error: errorDetail('not_found', 'This port serves only GET /metrics.', requestId, baseUrl) });
    res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId }).end(body);
  });
}

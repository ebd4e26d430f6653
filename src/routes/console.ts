import { readFile } from 'node:fs/promises';
import path from 'node:path';
import express, { Router } from 'express';
import helmet from 'helmet';
import { ApiError } from '../errors';
import { projectRoot } from '../paths';

/** Where `make build` puts the web console (Vite's output). */
export const defaultConsoleDir = path.join(projectRoot, 'dist', 'web');

/**
 * The web console: a single-page app under /console/. Hashed assets are cached for a year (their name
 * changes with their content); the HTML never is, so a new build is picked up at the next load. Any
 * other path under /console/ answers the HTML, so deep links work. Styles from 'self' only (the
 * service's default also allows inline styles, which the console never needs).
 */
export function consoleRoutes(dir: string = defaultConsoleDir): Router {
  const router = Router({ strict: true });
  const csp = helmet.contentSecurityPolicy({ directives: { styleSrc: ["'self'"] } });
  const neverCache = { 'Cache-Control': 'no-store' };

  router.get(['/', '/console'], (_req, res) => res.redirect(302, '/console/'));
  router.use('/console', csp);
  router.use(
    '/console/assets',
    express.static(path.join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false, redirect: false }),
    () => {
      throw new ApiError('not_found', 'No such console asset: it belongs to another build. Reload the page.');
    },
  );
  router.use('/console', express.static(dir, { index: false, redirect: false, setHeaders: (res) => res.set(neverCache) }));
  router.get('/console/{*page}', async (_req, res) => {
    let html: string;
    try {
      html = await readFile(path.join(dir, 'index.html'), 'utf8');
    } catch {
      throw new ApiError('service_unavailable', 'The console is not built: run `make build`.');
    }
    res.set(neverCache).type('html').send(html);
  });
  return router;
}

import path from 'node:path';
import express, { Router } from 'express';
import helmet from 'helmet';

const redocBundle = path.join(path.dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js');

const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ingest API reference</title>
</head>
<body>
<redoc spec-url="/openapi/v1.yaml" expand-responses="200,202,207"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
`;

/** Routes outside the contract: liveness, the served contract and its rendered reference (offline, no CDN). */
export function documentRoutes(servedYaml: string): Router {
  const router = Router();

  // Alive: the process answers. Whether it can serve (database, Redis) is /readyz, so that an
  // orchestrator restarts a stuck process but not every instance when the database is away.
  router.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });

  router.get('/openapi/v1.yaml', (_req, res) => {
    res.type('application/yaml').send(servedYaml);
  });

  const docsCsp = helmet.contentSecurityPolicy({
    directives: {
      scriptSrc: ["'self'", 'blob:'],
      workerSrc: ["'self'", 'blob:'],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
    },
  });
  router.get('/docs', docsCsp, (_req, res) => {
    res.type('html').send(docsPage);
  });
  router.use('/docs/redoc.standalone.js', express.static(redocBundle, { maxAge: '1h' }));

  return router;
}

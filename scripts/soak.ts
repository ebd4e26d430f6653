// `make soak`: a sustained mix of valid and invalid requests against the built
// server for SOAK_SECONDS (60), sampling its memory every second. A healthy
// server levels off: the RSS at 60 s stays near the RSS at 10 s, and nothing
// answers 5xx. Prints the figures and writes them to bench/results/.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { projectRoot } from '../src/paths';
import { memoryOf } from './bench/proc';
import { ingestctl, startBuiltServer } from './bench/server-process';
import { allowedEventTypes, makePool } from './bench/workload';

const seconds = Number(process.env.SOAK_SECONDS ?? 60);
const connections = Number(process.env.SOAK_CONNECTIONS ?? 10);

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'ingest-soak-'));
  const databaseUrl = `sqlite:${path.join(tmp, 'soak.db')}`;
  const setup = ingestctl(databaseUrl, ['quickstart']);
  ingestctl(databaseUrl, ['app', 'allow', '--app', String(setup.appId), ...allowedEventTypes]);
  const key = String(setup.key);
  // The per-key budget is set so that part of the traffic is refused with 429.
  const server = await startBuiltServer({
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PER_KEY: '500', RATE_LIMIT_PER_ORG: '100000' },
    logDir: tmp,
    label: 'soak',
  });

  const pool = makePool({ bodies: 10, batch: 50, workers: 5000, seed: 7, nowMs: Date.now() });
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const valid = pool.bodies.map((body) => ({ method: 'POST' as const, path: '/api/v1/ingest/events', headers: auth, body }));
  const mixed = JSON.stringify({
    events: [
      { eventType: 'ticket.resolved', category: 'TASK_UPDATE', actor: { externalId: 'soak' } },
      { eventType: 'not.allowed', category: 'TASK_UPDATE', actor: { externalId: 'soak' } },
      { eventType: 'ticket.resolved', category: 'NOPE', actor: {} },
      { eventType: 'x', duration: -1 },
    ],
  });
  const requests: autocannon.Request[] = [
    ...valid,
    // A new Idempotency-Key each time: the records pile up in the database, not in memory.
    {
      method: 'POST',
      path: '/api/v1/ingest/events',
      headers: auth,
      body: mixed,
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }),
    },
    { method: 'POST', path: '/api/v1/ingest/events', headers: auth, body: '{"events": [' },
    {
      method: 'POST',
      path: '/api/v1/ingest/events',
      headers: { ...auth, authorization: `Bearer svc_live_${'x'.repeat(43)}` },
      body: mixed,
    },
    { method: 'POST', path: '/api/v1/ingest/events', headers: { 'content-type': 'application/json' }, body: mixed },
    {
      method: 'POST',
      path: '/api/v1/ingest/snapshots',
      headers: auth,
      body: JSON.stringify({ snapshotType: 'load.now', actor: { externalId: 'soak' }, metrics: { a: 1, b: 'x' } }),
    },
    {
      method: 'POST',
      path: '/api/v1/ingest/snapshots',
      headers: auth,
      body: JSON.stringify({ snapshotType: 'load.now', actor: {}, metrics: {} }),
    },
    { method: 'GET', path: '/api/v1/apps/statistics', headers: auth },
    { method: 'PUT', path: '/api/v1/apps/statistics', headers: auth, body: JSON.stringify([{ id: 'wrong.prefix' }]) },
    { method: 'GET', path: '/api/v1/ingest/ping', headers: auth },
    { method: 'GET', path: '/api/v1/nowhere', headers: auth },
  ];

  const samples: Array<{ second: number; rssMb: number }> = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    const memory = memoryOf(server.child.pid as number);
    if (memory) samples.push({ second: Math.round((Date.now() - started) / 1000), rssMb: memory.rssMb });
  }, 1000);
  process.stdout.write(
    `soak: ${seconds} s, ${connections} connections, ${requests.length} kinds of request, server pid ${server.child.pid}\n`,
  );
  const result = await autocannon({ url: `http://127.0.0.1:${server.port}`, connections, duration: seconds, requests, timeout: 10 });
  clearInterval(sampler);
  await server.stop();

  const rssAt = (second: number) =>
    samples.reduce((best, s) => (Math.abs(s.second - second) < Math.abs(best.second - second) ? s : best)).rssMb;
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([status, s]) => [status, Number(s.count)]));
  const serverErrors = Object.entries(statuses)
    .filter(([status]) => Number(status) >= 500)
    .reduce((n, [, count]) => n + count, 0);
  const figures = {
    startedAt: new Date(started).toISOString(),
    seconds,
    connections,
    requests: result.requests.total,
    statuses,
    transportErrors: result.errors,
    timeouts: result.timeouts,
    serverErrors,
    rssMb: { at10s: Math.round(rssAt(10)), atEnd: Math.round(rssAt(seconds)), peak: Math.round(Math.max(...samples.map((s) => s.rssMb))) },
    samples,
  };
  const lines = [
    `requests: ${figures.requests} (${Math.round(figures.requests / seconds)}/s); statuses: ${JSON.stringify(statuses)}`,
    `5xx: ${serverErrors}; transport errors: ${result.errors}; timeouts: ${result.timeouts}`,
    `server RSS: ${figures.rssMb.at10s} MB at 10 s, ${figures.rssMb.atEnd} MB at ${seconds} s, peak ${figures.rssMb.peak} MB`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  const dir = path.join(projectRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `soak-${figures.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(figures, null, 2));
  process.stdout.write(`Results: ${path.relative(projectRoot, file)}\n`);
  rmSync(tmp, { recursive: true, force: true });
  if (serverErrors > 0) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

// `make bench-read`: the console's read endpoints on a database holding 2 million events
// over 1,000 workers and 90 days (bulk-loaded as `make bench`'s growth run does), on SQLite
// and (when reachable) PostgreSQL. For each scenario, 10 readers in parallel for a while,
// with ingest running at the same time (autocannon, as `make bench` sends it); then the
// export of one day of the organization, timed, with the server's RSS sampled meanwhile.
//
// Options (environment): BENCH_READ_EVENTS (2000000), BENCH_WORKERS (1000), BENCH_READERS (10),
// BENCH_READ_SECONDS (s per scenario, 10), BENCH_INGEST_CONNECTIONS (2), BENCH_INGEST_RATE (requests of
// 100 events per second, 10; 0 = as fast as they go), BENCH_DATABASES
// (sqlite,postgres), BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test),
// BENCH_LOG_LEVEL (warn), BENCH_RESULTS_DIR (bench/results; this writes into its read/ folder).
import { harness } from './harness';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/data/db';
import { projectRoot } from '../../src/paths';
import type { LoadOptions } from './load';
import { memoryOf } from './proc';
import type { Kind } from './report';
import { percentile } from './stats';
import { setPassword as setMemberPassword } from '../../src/domain/sessions';
import { startBuiltServer, type Running } from './server-process';
import { benchPostgresUrl, bulkLoad, databasesEnv, freshTarget, numberEnv, postgresReachable, setUp, type Setup, type Target } from './targets';
import { externalIdOf, makePool, rowTemplates } from './workload';

const settings = {
  events: numberEnv('BENCH_READ_EVENTS', 2_000_000),
  workers: numberEnv('BENCH_WORKERS', 1000),
  days: 90,
  readers: numberEnv('BENCH_READERS', 10),
  secondsPerScenario: numberEnv('BENCH_READ_SECONDS', 10),
  ingestConnections: numberEnv('BENCH_INGEST_CONNECTIONS', 2),
  /** Ingest requests (100 events each) per second while the readers run: 1,000 events/s, 4,000 times the data set's daily rate. */
  ingestRate: numberEnv('BENCH_INGEST_RATE', 10),
  databases: databasesEnv(),
  postgresUrl: benchPostgresUrl,
  serverLogLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
  resultsDir: path.resolve(projectRoot, process.env.BENCH_RESULTS_DIR ?? 'bench/results', 'read'),
};

const targets = { p99Ms: 50, exportSeconds: 2, exportRssGrowthMb: 50 };
const PASSWORD = 'bench-read-password-1';

const bench = harness('bench-read');
const { tmp, cleanups, log, track } = bench;
const place = { tmp, postgresUrl: settings.postgresUrl, applicationName: `ingest-bench-read-${process.pid}`, cleanups };

interface Scenario {
  name: string;
  /** A request path for one reader's next call. */
  path(): string;
}

interface ScenarioFigures {
  name: string;
  requests: number;
  non200: number;
  p50Ms: number;
  p99Ms: number;
  met: boolean;
}

interface ExportFigures {
  rows: number;
  bytes: number;
  seconds: number;
  rssBeforeMb: number;
  rssMaxMb: number;
  rssGrowthMb: number;
  met: boolean;
}

const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)] as T;

class Console {
  constructor(
    private readonly base: string,
    private readonly cookie: string,
  ) {}

  static async signIn(base: string, email: string): Promise<Console> {
    const res = await fetch(`${base}/api/v1/console/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
    return new Console(base, cookie);
  }

  fetch(pathAndQuery: string): Promise<Response> {
    return fetch(`${this.base}${pathAndQuery}`, { headers: { cookie: this.cookie } });
  }

  async json<T>(pathAndQuery: string): Promise<T> {
    const res = await this.fetch(pathAndQuery);
    if (res.status !== 200) throw new Error(`GET ${pathAndQuery} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  }
}

/** `settings.readers` loops calling the scenario's paths for `seconds`; latency of each call. */
async function measure(api: Console, scenario: Scenario): Promise<ScenarioFigures> {
  const latencies: number[] = [];
  let non200 = 0;
  const deadline = performance.now() + settings.secondsPerScenario * 1000;
  await Promise.all(
    Array.from({ length: settings.readers }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        const res = await api.fetch(scenario.path());
        await res.arrayBuffer();
        latencies.push(performance.now() - started);
        if (res.status !== 200) non200++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const p99Ms = Math.round(percentile(latencies, 99) * 10) / 10;
  const figures = { name: scenario.name, requests: latencies.length, non200, p50Ms: Math.round(percentile(latencies, 50) * 10) / 10, p99Ms, met: p99Ms <= targets.p99Ms && non200 === 0 };
  log(`${scenario.name}: ${figures.requests} requests, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms${non200 ? `, ${non200} not 200` : ''}`);
  return figures;
}

/** Downloads one day of the organization as CSV, timing it and sampling the server's RSS. */
async function measureExport(api: Console, server: Running, day: { from: string; to: string }): Promise<ExportFigures> {
  const pid = server.child.pid as number;
  const rssBeforeMb = memoryOf(pid)?.rssMb ?? 0;
  let rssMaxMb = rssBeforeMb;
  const sampler = setInterval(() => {
    rssMaxMb = Math.max(rssMaxMb, memoryOf(pid)?.rssMb ?? 0);
  }, 20);
  const started = performance.now();
  const res = await api.fetch(`/api/v1/console/timeline/export?format=csv&from=${day.from}&to=${day.to}`);
  if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const rssGrowthMb = Math.round((rssMaxMb - rssBeforeMb) * 10) / 10;
  const figures = {
    rows: lines - 1,
    bytes,
    seconds: Math.round(seconds * 100) / 100,
    rssBeforeMb: Math.round(rssBeforeMb),
    rssMaxMb: Math.round(rssMaxMb),
    rssGrowthMb,
    met: seconds <= targets.exportSeconds && rssGrowthMb <= targets.exportRssGrowthMb,
  };
  log(`export: ${figures.rows} rows, ${(bytes / 1e6).toFixed(1)} MB in ${figures.seconds} s, RSS +${rssGrowthMb} MB`);
  return figures;
}

/** The day (UTC) `daysAgo` before today, as an instant range. */
function utcDay(daysAgo: number): { day: string; from: string; to: string } {
  const start = new Date(Date.now() - daysAgo * 86_400_000);
  start.setUTCHours(0, 0, 0, 0);
  const day = start.toISOString().slice(0, 10);
  return { day, from: start.toISOString(), to: new Date(start.getTime() + 86_400_000).toISOString() };
}

async function setPassword(target: Target, setup: Setup): Promise<void> {
  const db = openDatabase(target.config);
  try {
    const member = await db.kysely.selectFrom('members').select('id').where('email_lower', '=', setup.ownerEmail.toLowerCase()).executeTakeFirstOrThrow();
    await setMemberPassword(db, member.id, PASSWORD);
  } finally {
    await db.close();
  }
}

/** Snapshots for the first 200 workers (two types, six metrics), so that worker pages have a strip. */
async function sendSnapshots(base: string, key: string): Promise<void> {
  for (let w = 0; w < Math.min(200, settings.workers); w++) {
    for (const snapshotType of ['load.now', 'queue.depth']) {
      const res = await fetch(`${base}/api/v1/ingest/snapshots`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ snapshotType, actor: { externalId: externalIdOf(w) }, metrics: { a: 1, b: 2, c: { value: 3, unit: 'count' }, d: 4, e: 5, f: 'x' } }),
      });
      if (res.status !== 202) throw new Error(`snapshot answered ${res.status}`);
    }
  }
}

/** Ingest at the same time as the readers: the load generator of `make bench`, for as long as they read. */
function startIngest(server: Running, key: string, seconds: number): ChildProcess {
  const pool = makePool({ bodies: 50, batch: 100, workers: settings.workers, seed: 7, nowMs: Date.now() });
  const bodiesFile = path.join(tmp, 'bodies.json');
  writeFileSync(bodiesFile, JSON.stringify(pool.bodies));
  const options: LoadOptions = {
    url: `http://127.0.0.1:${server.port}`,
    path: '/api/v1/ingest/events',
    bodiesFile,
    authorization: `Bearer ${key}`,
    connections: settings.ingestConnections,
    warmupSeconds: 0,
    durationSeconds: seconds,
    overallRate: settings.ingestRate || undefined,
  };
  const child = fork(path.join(__dirname, 'load.js'), [JSON.stringify(options)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return track(child);
}

async function measureDatabase(kind: Kind): Promise<{ scenarios: ScenarioFigures[]; export: ExportFigures; loadSeconds: number }> {
  const target = await freshTarget(kind, 'read', place);
  try {
    const setup = setUp(target);
    await setPassword(target, setup);
    const pool = makePool({ bodies: 200, batch: 100, workers: settings.workers, seed: 42, nowMs: Date.now() });
    log(`${kind}: bulk-loading ${settings.events.toLocaleString('en')} events over ${settings.workers} workers and ${settings.days} days`);
    const loaded = await bulkLoad(target, setup, { events: settings.events, workers: settings.workers, days: settings.days, templates: rowTemplates(pool, settings.workers) });
    log(`${kind}: loaded ${loaded.loaded.toLocaleString('en')} rows in ${loaded.seconds.toFixed(1)} s`);

    const env: Record<string, string | undefined> = {
      ...process.env,
      DATABASE_URL: target.databaseUrl,
      LOG_LEVEL: settings.serverLogLevel,
      RATE_LIMIT_PER_KEY: '1000000',
      RATE_LIMIT_PER_ORG: '10000000',
      EVENT_CATEGORY_SET: 'B',
    };
    delete env.REDIS_URL;
    const server = await startBuiltServer({ env, logDir: tmp, label: `read-${kind}`, nodeArgs: [] });
    track(server.child);
    try {
      const base = `http://127.0.0.1:${server.port}`;
      await sendSnapshots(base, setup.key);
      const api = await Console.signIn(base, setup.ownerEmail);
      const workerIds = loaded.scope.workerIds;
      const deep = utcDay(80);
      const deepFirst = await api.json<{ nextCursor: string }>(`/api/v1/console/timeline?to=${deep.to}`);
      const deepPath = `/api/v1/console/timeline?to=${deep.to}&cursor=${deepFirst.nextCursor}`;
      const days = Array.from({ length: 80 }, (_, i) => utcDay(i + 1));
      const scenarios: Scenario[] = [
        { name: 'timeline, first page', path: () => '/api/v1/console/timeline' },
        { name: 'timeline, a page 80 days back (cursor)', path: () => deepPath },
        {
          name: "one worker's day",
          path: () => {
            const d = pick(days);
            return `/api/v1/console/timeline?workerId=${pick(workerIds)}&from=${d.from}&to=${d.to}`;
          },
        },
        { name: 'day grouped per worker', path: () => `/api/v1/console/timeline/workers?day=${pick(days).day}` },
        { name: 'worker search (prefix)', path: () => `/api/v1/console/workers?q=${externalIdOf(Math.floor(Math.random() * settings.workers)).slice(0, 11)}` },
        { name: 'worker detail with strip', path: () => `/api/v1/console/workers/${pick(workerIds.slice(0, 200))}` },
      ];
      const ingest = startIngest(server, setup.key, settings.secondsPerScenario * scenarios.length + 30);
      await new Promise((r) => setTimeout(r, 2000));
      const figures: ScenarioFigures[] = [];
      for (const scenario of scenarios) figures.push(await measure(api, scenario));
      const exported = await measureExport(api, server, utcDay(2));
      ingest.kill('SIGTERM');
      return { scenarios: figures, export: exported, loadSeconds: loaded.seconds };
    } finally {
      await server.stop();
    }
  } finally {
    await target.drop();
  }
}

function table(kind: Kind, result: Awaited<ReturnType<typeof measureDatabase>>): string {
  const lines = [`${kind}`, `  ${'scenario'.padEnd(42)} ${'requests'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}  target p99 ≤ ${targets.p99Ms} ms`];
  for (const s of result.scenarios) {
    lines.push(`  ${s.name.padEnd(42)} ${String(s.requests).padStart(8)} ${String(s.p50Ms).padStart(8)} ${String(s.p99Ms).padStart(8)}  ${s.met ? 'met' : 'NOT MET'}${s.non200 ? ` (${s.non200} not 200)` : ''}`);
  }
  const e = result.export;
  lines.push(
    `  export of one day: ${e.rows} rows, ${(e.bytes / 1e6).toFixed(1)} MB in ${e.seconds} s (target ≤ ${targets.exportSeconds} s), server RSS ${e.rssBeforeMb} → ${e.rssMaxMb} MB, +${e.rssGrowthMb} MB (target ≤ ${targets.exportRssGrowthMb} MB): ${e.met ? 'met' : 'NOT MET'}`,
  );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const results: Record<string, unknown> = { startedAt: new Date().toISOString(), settings, targets, loadAverage: os.loadavg(), cpus: os.cpus().length };
  const out: string[] = [];
  for (const kind of settings.databases) {
    if (kind === 'postgres') {
      const why = await postgresReachable(settings.postgresUrl);
      if (why) {
        log(`SKIPPED: PostgreSQL at ${settings.postgresUrl} is unreachable (${why})`);
        results.postgres = { skipped: why };
        continue;
      }
    }
    const result = await measureDatabase(kind);
    results[kind] = result;
    out.push(table(kind, result));
  }
  results.loadAverageAfter = os.loadavg();
  mkdirSync(settings.resultsDir, { recursive: true });
  const file = path.join(settings.resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(
    `\nConsole reads with ${settings.events.toLocaleString('en')} events, ${settings.readers} readers, ingest at ${settings.ingestRate || 'full'} requests/s of 100 events (load average at the start ${loadAverage(results.loadAverage)}, at the end ${loadAverage(results.loadAverageAfter)}, ${os.cpus().length} cores)\n${out.join('\n')}\nResults: ${path.relative(projectRoot, file)}\n`,
  );
}

function loadAverage(value: unknown): string {
  return (value as number[]).map((l) => l.toFixed(2)).join(' ');
}

bench.run(main);

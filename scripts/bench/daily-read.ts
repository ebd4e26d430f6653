// `make bench-daily`: GET /api/v1/console/statistics/daily on a filled store, on SQLite and
// (when reachable) PostgreSQL. The store holds what 10,000,000 events over 1,000 workers and
// 90 days would leave: the bench manifest's 8 statistics with parts on every (statistic,
// worker, day), added straight through the data layer (addParts) rather than by ingesting.
// Then the built server answers, one request at a time, each timed until its body is read:
// 30 days × 8 statistics for all workers (groupBy=worker&limit=1000), a page of 100 workers,
// and the organization's series; p50 and max against the 200 ms target.
//
// Options (environment): BENCH_WORKERS (1000), BENCH_DAILY_READS (timed requests per read, 15,
// after 2 untimed), BENCH_DATABASES (sqlite,postgres), BENCH_POSTGRES_URL
// (postgres://postgres@127.0.0.1:5432/test), BENCH_PROFILE (0; 1 runs the server under
// node --cpu-prof and summarizes the reads' samples), BENCH_LOG_LEVEL (warn),
// BENCH_RESULTS_DIR (bench/results; profiles are kept in its daily/ folder).
import { harness } from './harness';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/data/db';
import { addParts, packCells, readState, type PartsRow } from '../../src/data/rollups';
import { projectRoot } from '../../src/paths';
import { formatProfile, summarizeProfile } from './profile';
import { ensureWorkers } from './raw';
import type { Kind } from './report';
import { benchManifest, lastDays, listsSettled, ownerSession, putManifest, recomputeDone, slugOf, timeRead } from './rollups';
import type { ReadFigures } from './read-client';
import { startBuiltServer } from './server-process';
import { benchPostgresUrl, databasesEnv, freshTarget, numberEnv, postgresReachable, setUp, type Setup, type Target } from './targets';

const settings = {
  workers: numberEnv('BENCH_WORKERS', 1000),
  days: 90,
  reads: numberEnv('BENCH_DAILY_READS', 15),
  warmupReads: 2,
  databases: databasesEnv(),
  postgresUrl: benchPostgresUrl,
  profile: process.env.BENCH_PROFILE === '1',
  serverLogLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
  resultsDir: path.resolve(projectRoot, process.env.BENCH_RESULTS_DIR ?? 'bench/results', 'daily'),
};

const TARGET_MS = 200;
const DAY_MS = 86_400_000;

const bench = harness('bench-daily');
const { tmp, cleanups, log, track } = bench;
const place = { tmp, postgresUrl: settings.postgresUrl, applicationName: `ingest-bench-daily-${process.pid}`, cleanups };

/**
 * Parts on every (statistic, worker, day) of the last `settings.days` days, in the generation
 * that answers: counts that differ by worker, so that the ranking has work to do, and the sums,
 * numerators and denominators each aggregation reads. One transaction per day.
 */
async function fill(target: Target, setup: Setup, definitions: { id: string; pillar: string }[]): Promise<number> {
  const db = openDatabase(target.config);
  try {
    const { workerIds } = await ensureWorkers(db, setup.appId, settings.workers);
    const state = await readState(db.kysely, setup.orgId);
    if (!state) throw new Error('no rollup state after the manifest was put');
    let rows = 0;
    for (let d = 1; d <= settings.days; d++) {
      const day = new Date(Date.now() - d * DAY_MS).toISOString().slice(0, 10);
      const parts: PartsRow[] = [];
      definitions.forEach(({ id, pillar }, s) => {
        workerIds.forEach((workerId, w) => {
          const count = 1 + ((w * 7 + s * 3 + d) % 23);
          parts.push({ statisticId: id, workerId, day, pillar, count, sum: count * 90, numerator: count % 4, denominator: count });
        });
      });
      await db.transaction((trx) => addParts(trx, setup.orgId, state.generation, packCells(parts)));
      rows += parts.length;
    }
    return rows;
  } finally {
    await db.close();
  }
}

interface DatabaseRun {
  kind: Kind;
  reads: ReadFigures[];
  loadAverage: number[];
  profile?: string;
}

async function measure(kind: Kind): Promise<DatabaseRun> {
  const target = await freshTarget(kind, 'daily', place);
  try {
    const setup = setUp(target);
    const slug = await slugOf(target, setup.appId);
    const profileDir = settings.profile ? mkdtempSync(path.join(tmp, 'prof-')) : undefined;
    const env = { ...process.env, DATABASE_URL: target.databaseUrl, LOG_LEVEL: settings.serverLogLevel, REDIS_URL: undefined };
    const server = await startBuiltServer({ env, logDir: tmp, label: kind, nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] });
    track(server.child);
    let reads: ReadFigures[];
    let window: { fromUs: number; toUs: number };
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const manifest = benchManifest(slug, 'bench');
      await putManifest(base, setup.key, manifest);
      await recomputeDone(target, setup.orgId, 60);
      const filling = performance.now();
      const rows = await fill(
        target,
        setup,
        manifest.map((d) => ({ id: String(d.id), pillar: String(d.pillar) })),
      );
      log(`${kind}: ${rows.toLocaleString('en')} rollup rows (${manifest.length} statistics × ${settings.workers} workers × ${settings.days} days) in ${((performance.now() - filling) / 1000).toFixed(1)} s`);
      log(`${kind}: the closed days listed by the service ${(await listsSettled(target, 300)).toFixed(1)} s after the fill`);
      const cookie = await ownerSession(target, setup, base);
      const range = lastDays(30);
      const ids = manifest.map((d) => `statisticId=${String(d.id)}`).join('&');
      const daily = `/api/v1/console/statistics/daily?from=${range.from}&to=${range.to}&${ids}`;
      const scenarios = [
        { name: `all ${settings.workers} workers (groupBy=worker&limit=1000)`, path: `${daily}&groupBy=worker&limit=1000` },
        { name: 'a page of 100 workers (groupBy=worker&limit=100)', path: `${daily}&groupBy=worker&limit=100` },
        { name: 'organization (groupBy=none)', path: daily },
      ];
      for (const s of scenarios) await timeRead(base, cookie, s.name, s.path, settings.warmupReads);
      const fromUs = Number(process.hrtime.bigint() / 1000n);
      reads = [];
      for (const s of scenarios) reads.push(await timeRead(base, cookie, s.name, s.path, settings.reads));
      window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) };
    } finally {
      await server.stop();
    }
    const loadAverage = os.loadavg().map((l) => Math.round(l * 100) / 100);
    for (const r of reads) log(`${kind}: ${r.name}: p50 ${r.p50Ms} ms, max ${r.maxMs} ms, ${r.series} series, ${r.dayCells} day cells, ${r.bytes} bytes`);
    const file = profileDir && readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    let profile: string | undefined;
    if (profileDir && file) {
      mkdirSync(settings.resultsDir, { recursive: true });
      const kept = path.join(settings.resultsDir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${kind}.cpuprofile`);
      copyFileSync(path.join(profileDir, file), kept);
      profile = formatProfile(`daily reads ${kind}`, summarizeProfile(kept, window));
    }
    return { kind, reads, loadAverage, profile };
  } finally {
    await target.drop();
  }
}

function report(runs: DatabaseRun[]): string {
  const lines = [`GET /api/v1/console/statistics/daily, 30 days × 8 statistics, filled store (${settings.workers} workers × ${settings.days} days), ${settings.reads} requests each, one at a time`];
  for (const run of runs) {
    lines.push(`${run.kind} (load average ${run.loadAverage.join(' ')}, ${os.cpus().length} cores)`);
    for (const r of run.reads) {
      const met = r.p50Ms <= TARGET_MS ? 'met' : 'NOT MET';
      lines.push(`  ${r.name.padEnd(46)} p50 ${String(r.p50Ms).padStart(5)} ms  max ${String(r.maxMs).padStart(5)} ms  ${String(r.series).padStart(5)} series  ${(r.bytes / 1e6).toFixed(1).padStart(5)} MB  p50 ≤ ${TARGET_MS} ms: ${met}`);
    }
  }
  for (const run of runs) if (run.profile) lines.push('', run.profile);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const runs: DatabaseRun[] = [];
  for (const kind of settings.databases) {
    if (kind === 'postgres') {
      const why = await postgresReachable(settings.postgresUrl);
      if (why) {
        log(`SKIPPED: PostgreSQL at ${settings.postgresUrl} is unreachable (${why})`);
        continue;
      }
    }
    runs.push(await measure(kind));
  }
  process.stdout.write(`\n${report(runs)}\n`);
}

bench.run(main);

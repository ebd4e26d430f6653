// `make bench`: POST /api/v1/ingest/events under load, next to two ceilings, on
// SQLite and (when reachable) PostgreSQL. See README "Performance" and the options below.
//
//   service  the built server (node dist/src/server.js) as a child process on a fresh
//            database set up with bin/ingestctl and the rollups' manifest of 8 statistics (the ingest
//            targets hold with rollups maintained), driven by autocannon in its own process
//   raw      the same rows through better-sqlite3 / pg, 100 per transaction, no HTTP,
//            into a fresh database migrated by the project's migrations
//   bare     a node:http server that only reads and JSON.parses the same bodies
//   heavy    the service again on the same database, at BENCH_HEAVY_CONNECTIONS connections: no error
//            and no request over 2 s, however slow each gets
//   growth   the service again once 2 million events over 90 days were bulk-loaded onto what the runs before stored,
//            against an empty store measured just before the load and after this run (and the sweep's)
//   growth with retention sweep
//            the service on those rows again with EVENT_RETENTION_DAYS=60: the rows span 90 days, so
//            the background sweep deletes about a third of them while the load runs; then once more without
//            the sweep, and the sweep's run compared with the mean of the growth run and that one
//   rollups  the service without a manifest and with a manifest of 8 statistics matching every event,
//            four times each (without, with, with, without, with, without, without, with), each on an
//            empty database of its own, the medians compared (the delay to the rollups from /metrics,
//            the outbox backlog at the end); then, on another database,
//            BENCH_ROLLUP_EVENTS events bulk-loaded, the manifest replaced
//            (a recompute over all of them, timed, with the load running meanwhile), and
//            /statistics/daily for 30 days x 8 statistics, per organization and per worker (all workers)
//
// Each run counts its measured answers over 100 ms (the p99 target's bound) and, on PostgreSQL, how many of them
// were in flight while a checkpoint synced its files (checkpoints.ts).
//
// Options (environment): BENCH_DURATION (s, 20), BENCH_WARMUP (s, 10: long enough for the 1,000 workers to exist before measuring), BENCH_CONNECTIONS (10),
// BENCH_HEAVY_CONNECTIONS (50; 0 skips the heavy run),
// BENCH_BATCH (events per request, 100), BENCH_WORKERS (1000), BENCH_BODIES (distinct bodies, 200),
// BENCH_DATABASES (sqlite,postgres), BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test),
// BENCH_GROWTH (1; 0 skips), BENCH_GROWTH_EVENTS (2000000), BENCH_RETENTION (1; 0 skips the growth run with the
// retention sweep), BENCH_ROLLUPS (1; 0 skips the rollups figures), BENCH_ROLLUP_EVENTS (10000000),
// BENCH_ROLLUP_READS (15 timed requests per read, as make bench-daily times), BENCH_PROFILE (0; 1 adds a profiled
// service run per database and summarizes it), BENCH_LOG_LEVEL (server LOG_LEVEL, warn), BENCH_SERVER_NODE_OPTIONS
// (NODE_OPTIONS for the server only, e.g. --max-semi-space-size=32 or --require a preload), BENCH_SERVER_NODE_ARGS
// (flags on the server's command line, space-separated: V8's flags that NODE_OPTIONS refuses, e.g. --single-threaded-gc),
// BENCH_RESULTS_DIR (bench/results), BENCH_QUIET_PCT (15) and BENCH_QUIET_WAIT (s, 30): before each
// measurement, wait that long at most for the machine to be that idle.
import { harness } from './harness';
import { fork, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Client } from 'pg';
import { migrate, openDatabase } from '../../src/data/db';
import { newId } from '../../src/data/ids';
import { projectRoot } from '../../src/paths';
import { CheckpointWatch, slowAndCheckpoints, type CheckpointFigures } from './checkpoints';
import type { LoadOptions } from './load';
import type { LoadResult } from './load-record';
import { cpuBetween, machineBusyOver, memoryOf, readCpu, type CpuReading } from './proc';
import { summarizeProfile, type ProfileSummary } from './profile';
import {
  evaluateTargets,
  formatReport,
  growthToEmpty,
  ratioToMean,
  ratio,
  type CpuFigures,
  type DatabaseFigures,
  type HttpFigures,
  type Kind,
  type Quiet,
  type RawFigures,
  type Results,
  type RollupFigures,
  type ServiceFigures,
} from './report';
import { backlog, benchManifest, lastDays, listsSettled, ownerSession, putManifest, recomputeDone, rollupDelay, slugOf, timeRead } from './rollups';
import { rawPostgres, rawSqlite, type RawResult, type RawScope } from './raw';
import {
  benchPostgresUrl,
  bulkLoad,
  countEvents,
  databasesEnv,
  freshTarget,
  numberEnv,
  postgresReachable,
  setUp,
  type Setup,
  type Target,
} from './targets';
import { freePort, startBuiltServer, stopChild, type Running } from './server-process';
import { allowedEventTypes, makePool, rowTemplates, type RowTemplate } from './workload';


const settings = {
  durationSeconds: numberEnv('BENCH_DURATION', 20),
  warmupSeconds: numberEnv('BENCH_WARMUP', 10),
  connections: numberEnv('BENCH_CONNECTIONS', 10),
  heavyConnections: numberEnv('BENCH_HEAVY_CONNECTIONS', 50),
  batch: numberEnv('BENCH_BATCH', 100),
  workers: numberEnv('BENCH_WORKERS', 1000),
  bodies: numberEnv('BENCH_BODIES', 200),
  databases: databasesEnv(),
  postgresUrl: benchPostgresUrl,
  growth: process.env.BENCH_GROWTH !== '0',
  growthEvents: numberEnv('BENCH_GROWTH_EVENTS', 2_000_000),
  growthDays: 90,
  retention: process.env.BENCH_RETENTION !== '0',
  rollups: process.env.BENCH_ROLLUPS !== '0',
  rollupEvents: numberEnv('BENCH_ROLLUP_EVENTS', 10_000_000),
  rollupReads: numberEnv('BENCH_ROLLUP_READS', 15),
  retentionDays: 60,
  profile: process.env.BENCH_PROFILE === '1',
  serverLogLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
  /** Node's options for the server only (not the load generator), e.g. a V8 heap flag to measure. */
  serverNodeOptions: process.env.BENCH_SERVER_NODE_OPTIONS,
  /** Flags before the server's script, for those NODE_OPTIONS does not take. */
  serverNodeArgs: (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  /** Before each measurement, wait up to quietWaitSeconds for the machine to be at most quietPct % busy. */
  quietPct: numberEnv('BENCH_QUIET_PCT', 15),
  quietWaitSeconds: numberEnv('BENCH_QUIET_WAIT', 30),
  resultsDir: path.resolve(projectRoot, process.env.BENCH_RESULTS_DIR ?? 'bench/results'),
  /** Service configuration for the run: limits raised by configuration, nothing else changed. */
  serverEnv: { RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_ORG: '10000000', EVENT_CATEGORY_SET: 'B' } as Record<string, string>,
};

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const bench = harness('bench');
const { tmp, cleanups, log, track } = bench;

// ---------------------------------------------------------------- databases

const applicationName = `ingest-bench-${process.pid}`;

/**
 * The PostgreSQL backends serving the benchmark's connections. Shared background processes
 * (WAL writer, checkpointer) also work for other databases' clients: they count as "other".
 */
async function postgresPids(): Promise<number[]> {
  const c = new Client({ connectionString: settings.postgresUrl });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>(
      `select pid from pg_stat_activity where application_name = $1`,
      [applicationName],
    );
    return rows.map((r) => r.pid);
  } finally {
    await c.end();
  }
}

const place = { tmp, postgresUrl: settings.postgresUrl, applicationName, cleanups };

// ---------------------------------------------------------------- processes

/** The built service, as `make run` starts it, with the benchmark's configuration. */
async function startService(target: Target, profileDir?: string, extraEnv: Record<string, string> = {}): Promise<Running> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...settings.serverEnv,
    ...extraEnv,
    DATABASE_URL: target.databaseUrl,
    LOG_LEVEL: settings.serverLogLevel,
    INGEST_BATCH_LIMIT: String(Math.max(500, settings.batch)),
    NODE_OPTIONS: settings.serverNodeOptions,
  };
  delete env.REDIS_URL; // in-memory rate limiting, as a single instance runs
  const running = await startBuiltServer({ env, logDir: tmp, label: target.kind, nodeArgs: [...settings.serverNodeArgs, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])] });
  track(running.child);
  return running;
}

async function startBare(): Promise<Running> {
  const port = await freePort();
  const child = track(spawn(process.execPath, [path.join(__dirname, 'bare-server.js'), String(port)], { stdio: ['ignore', 'pipe', 'inherit'] }));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`bare server exited (${code})`)));
  });
  return { child, port, logFile: '', stop: () => stopChild(child) };
}

interface Measured {
  load: LoadResult;
  /** Measured window, monotonic clock, microseconds (for the profile). */
  window: { fromUs: number; toUs: number };
  cpu: CpuFigures;
  rssMaxSampledMb: number;
  checkpoints?: CheckpointFigures;
}

/** Runs the load generator in its own process against the server; samples the server's RSS and CPU meanwhile. */
async function drive(server: Running, authorization: string | undefined, withPostgres: boolean, connections = settings.connections): Promise<Measured> {
  const options: LoadOptions = {
    url: `http://127.0.0.1:${server.port}`,
    path: '/api/v1/ingest/events',
    bodiesFile: path.join(tmp, 'bodies.json'),
    authorization,
    connections,
    warmupSeconds: settings.warmupSeconds,
    durationSeconds: settings.durationSeconds,
  };
  const child = track(fork(path.join(__dirname, 'load.js'), [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const serverPid = server.child.pid as number;
  const loadPid = child.pid as number;
  let startCpu: CpuReading | undefined;
  let fromUs = 0;
  let rssMax = 0;
  let sampler: NodeJS.Timeout | undefined;
  let pgPids: number[] = [];
  const checkpointWatch = withPostgres ? new CheckpointWatch(settings.postgresUrl) : undefined;
  const result = await new Promise<{ load: LoadResult; end: CpuReading; toUs: number; checkpoints?: CheckpointFigures }>((resolve, reject) => {
    // The generator exits as soon as it has sent its result, while PostgreSQL's backends are still being listed.
    let answered = false;
    child.on('message', async (message: { type: string; at?: string; result?: LoadResult }) => {
      try {
        if (message.type === 'measuring') {
          fromUs = Number(message.at);
          pgPids = withPostgres ? await postgresPids() : [];
          await checkpointWatch?.start();
          startCpu = readCpu([serverPid, loadPid], pgPids);
          sampler = setInterval(() => {
            rssMax = Math.max(rssMax, memoryOf(serverPid)?.rssMb ?? 0);
          }, 200);
        } else if (message.type === 'result' && message.result) {
          answered = true;
          // The processes read before the generator is gone; then PostgreSQL, whose backends the server's
          // pool opened during the window count too.
          const processes = readCpu([serverPid, loadPid]);
          const toUs = Number(process.hrtime.bigint() / 1000n);
          const backends = withPostgres ? [...new Set([...pgPids, ...(await postgresPids())])] : [];
          const end = { ...processes, postgres: readCpu([], backends).postgres };
          resolve({ load: message.result, end, toUs, checkpoints: await checkpointWatch?.stop() });
        }
      } catch (err) {
        reject(err);
      }
    });
    child.once('exit', (code) => {
      if (!answered) reject(new Error(`load generator exited (${code}) without a result`));
    });
  });
  clearInterval(sampler);
  await new Promise((r) => setTimeout(r, 50));
  if (!startCpu) throw new Error('load generator never started measuring');
  const cpu = cpuBetween(startCpu, result.end);
  const serverPct = cpu.pids.get(serverPid) ?? 0;
  const loadGeneratorPct = cpu.pids.get(loadPid) ?? 0;
  const otherThreads = [...cpu.threads]
    .filter(([tid]) => tid !== serverPid)
    .map(([, pct]) => pct)
    .sort((a, b) => b - a);
  return {
    load: result.load,
    window: { fromUs, toUs: result.toUs },
    cpu: {
      serverPct,
      serverMainThreadPct: cpu.threads.get(serverPid) ?? 0,
      serverOtherThreadPct: otherThreads[0] ?? 0,
      serverThirdThreadPct: otherThreads[1] ?? 0,
      loadGeneratorPct,
      postgresPct: cpu.postgres,
      serverSystemPct: cpu.systemPids.get(serverPid) ?? 0,
      postgresSystemPct: cpu.postgresSystem,
      otherPct: Math.max(0, cpu.machineBusyCores - serverPct - loadGeneratorPct - cpu.postgres),
      machineBusyPct: cpu.machineBusy,
    },
    rssMaxSampledMb: Math.round(rssMax),
    checkpoints: result.checkpoints,
  };
}

// ---------------------------------------------------------------- measurements

/** Other work on a shared machine skews every figure: give it a chance to finish first. */
async function waitForQuiet(label: string): Promise<Quiet> {
  const started = performance.now();
  let busy = await machineBusyOver(1000);
  let warned = false;
  while (busy > settings.quietPct && (performance.now() - started) / 1000 < settings.quietWaitSeconds) {
    if (!warned) log(`${label}: the machine is ${busy}% busy with other work; waiting up to ${settings.quietWaitSeconds} s for it to settle`);
    warned = true;
    busy = await machineBusyOver(2000);
  }
  const waitedSeconds = Math.round((performance.now() - started) / 1000);
  if (busy > settings.quietPct) log(`${label}: still ${busy}% busy; measuring anyway (see "other" CPU)`);
  return { busyPct: busy, waitedSeconds };
}

function httpFigures(m: Measured, quietBefore: Quiet): HttpFigures {
  const ok = m.load.statusCounts['202'] ?? 0;
  const non202 = Object.fromEntries(Object.entries(m.load.statusCounts).filter(([status]) => status !== '202'));
  return {
    eventsPerSecond: Math.round((ok * settings.batch) / m.load.seconds),
    requestsPerSecond: Math.round(ok / m.load.seconds),
    accepted202: ok,
    non202,
    errors: m.load.errors,
    timeouts: m.load.timeouts,
    latencyMs: m.load.latencyMs,
    seconds: m.load.seconds,
    cpu: m.cpu,
    quietBefore,
    ...slowAndCheckpoints(m.load.slow, m.checkpoints),
  };
}

async function measureService(
  target: Target,
  setup: Setup,
  label: string,
  options: { profile?: boolean; env?: Record<string, string>; connections?: number; beforeStop?: (server: Running) => Promise<void> } = {},
): Promise<ServiceFigures> {
  const before = await countEvents(target);
  const profileDir = options.profile ? mkdtempSync(path.join(tmp, 'prof-')) : undefined;
  const server = await startService(target, profileDir, options.env);
  let measured: Measured;
  let quiet: Quiet;
  let peakMb = 0;
  try {
    quiet = await waitForQuiet(label);
    log(`${label}: server pid ${server.child.pid} on :${server.port}, ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured`);
    measured = await drive(server, `Bearer ${setup.key}`, target.kind === 'postgres', options.connections);
    peakMb = memoryOf(server.child.pid as number)?.hwmMb ?? 0;
    await options.beforeStop?.(server);
  } finally {
    await server.stop();
  }
  const figures: ServiceFigures = {
    ...httpFigures(measured, quiet),
    rss: { peakMb: Math.round(peakMb), maxSampledMb: measured.rssMaxSampledMb },
    eventsStored: {
      added: (await countEvents(target)) - before,
      promisedBy202: ((measured.load.statusCounts['202'] ?? 0) + (measured.load.warmupStatusCounts['202'] ?? 0)) * settings.batch,
    },
  };
  // The retention sweep deletes rows as the run adds them: the count cannot tell whether every 202 was kept.
  const sweeping = options.env?.EVENT_RETENTION_DAYS !== undefined;
  if (!sweeping && figures.eventsStored.added < figures.eventsStored.promisedBy202) {
    log(`${label}: WARNING: ${figures.eventsStored.promisedBy202} events answered 202 but only ${figures.eventsStored.added} rows were added`);
  }
  if (profileDir) {
    // One file per thread (CPU.date.time.pid.thread.seq.cpuprofile): the main thread's is thread 0.
    const files = readdirSync(profileDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => ({ f, thread: Number(f.split('.').at(-3)) }))
      .sort((a, b) => a.thread - b.thread);
    if (files.length > 0) {
      mkdirSync(settings.resultsDir, { recursive: true });
      const summaries = files.map(({ f, thread }) => {
        const kept = path.join(settings.resultsDir, `${stamp}-${target.kind}${thread === 0 ? '' : `-thread-${thread}`}.cpuprofile`);
        writeFileSync(kept, readFileSync(path.join(profileDir, f)));
        return summarizeProfile(kept, measured.window);
      });
      [figures.profile] = summaries;
      // Threads that mostly wait (the checkpointer) say nothing worth printing.
      figures.threadProfiles = summaries.slice(1).filter((summary) => summary.idlePct < 95);
    } else {
      log(`${label}: no .cpuprofile was written`);
    }
  }
  const errors = figures.errors || Object.keys(figures.non202).length ? `, non-202 ${JSON.stringify(figures.non202)}, errors ${figures.errors}` : '';
  log(`${label}: ${figures.eventsPerSecond} events/s, p99 ${figures.latencyMs.p99} ms, peak RSS ${figures.rss.peakMb} MB${errors}`);
  return figures;
}

async function measureBare(): Promise<HttpFigures> {
  const server = await startBare();
  try {
    const quiet = await waitForQuiet('bare HTTP');
    log(`bare HTTP: pid ${server.child.pid} on :${server.port}, ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured`);
    const figures = httpFigures(await drive(server, undefined, false), quiet);
    log(`bare HTTP: ${figures.eventsPerSecond} events/s, p99 ${figures.latencyMs.p99} ms`);
    return figures;
  } finally {
    await server.stop();
  }
}

async function measureRaw(kind: Kind, templates: RowTemplate[][]): Promise<RawFigures> {
  const target = await freshTarget(kind, 'raw', place);
  try {
    const db = openDatabase(target.config);
    await migrate(db); // the tables and indexes the service has
    await db.close();
    const scope: RawScope = {
      orgId: newId('org'),
      appId: newId('app'),
      integrationId: 'custom:bench',
      workerIds: Array.from({ length: settings.workers }, () => newId('wkr')),
    };
    const quietBefore = await waitForQuiet(`raw ${kind}`);
    log(`raw ${kind}: ${settings.durationSeconds} s of ${settings.batch}-row transactions${kind === 'postgres' ? `, ${settings.connections} connections` : ''}`);
    let start = readCpu([process.pid]);
    let end = start;
    let result: RawResult;
    if (kind === 'sqlite') {
      result = await rawSqlite((target.config as { path: string }).path, templates, scope, settings.durationSeconds);
      end = readCpu([process.pid]);
    } else {
      let pgPids: number[] = [];
      result = await rawPostgres(target.databaseUrl, templates, scope, settings.durationSeconds, settings.connections, {
        connected: async () => {
          pgPids = await postgresPids();
          start = readCpu([process.pid], pgPids);
        },
        done: async () => {
          end = readCpu([process.pid], pgPids);
        },
      });
    }
    const cpu = cpuBetween(start, end);
    const benchPct = cpu.pids.get(process.pid) ?? 0;
    log(`raw ${kind}: ${result.eventsPerSecond} events/s`);
    return {
      ...result,
      cpu: {
        benchPct,
        postgresPct: cpu.postgres,
        benchSystemPct: cpu.systemPids.get(process.pid) ?? 0,
        postgresSystemPct: cpu.postgresSystem,
        otherPct: Math.max(0, cpu.machineBusyCores - benchPct - cpu.postgres),
      },
      quietBefore,
    };
  } finally {
    await target.drop();
  }
}

async function measureDatabase(kind: Kind, templates: RowTemplate[][], bare: HttpFigures): Promise<DatabaseFigures> {
  const target = await freshTarget(kind, 'service', place);
  try {
    const setup = setUp(target);
    await installManifest(target, setup, 'first');
    const service = await measureService(target, setup, `service ${kind} with 8 statistics`);
    const raw = await measureRaw(kind, templates);
    const connections = settings.heavyConnections;
    const heavy = connections > 0 ? { connections, ...(await measureService(target, setup, `service ${kind} at ${connections} connections`, { connections })) } : undefined;
    let profile: ProfileSummary | undefined;
    let threadProfiles: ProfileSummary[] | undefined;
    if (settings.profile) {
      ({ profile, threadProfiles } = await measureService(target, setup, `profiled service ${kind}`, { profile: true }));
    }
    const rollups = settings.rollups ? await measureRollups(kind, templates) : undefined;
    const { growth, growthWithRetention, growthRatio } = settings.growth ? await measureGrowth(kind, target, setup, templates) : {};
    return {
      service,
      raw,
      heavy,
      rollups,
      growth,
      growthWithRetention,
      profile,
      threadProfiles,
      ratios: {
        serviceToRaw: ratio(service.eventsPerSecond, raw.eventsPerSecond),
        serviceToBare: ratio(service.eventsPerSecond, bare.eventsPerSecond),
        growthToEmpty: growthRatio,
        retentionToGrowth: growth && growthWithRetention?.after ? ratioToMean(growthWithRetention.eventsPerSecond, [growth.eventsPerSecond, growthWithRetention.after.eventsPerSecond]) : undefined,
      },
    };
  } finally {
    await target.drop();
  }
}

/**
 * The growth run, then (unless BENCH_RETENTION=0) the same store with the retention sweep running and once more
 * without it, next to it in time; all between two runs on an empty store, the growth run's measure: the first run,
 * half an hour before, met a machine of another speed.
 */
async function measureGrowth(
  kind: Kind,
  target: Target,
  setup: Setup,
  templates: RowTemplate[][],
): Promise<Pick<DatabaseFigures, 'growth' | 'growthWithRetention'> & { growthRatio: number }> {
  const emptyBefore = await measureIngest(kind, 'growth-empty-before', true, `growth ${kind}: empty store before`);
  // Onto what the runs before stored (their events are of the last 7 days): the retention sweep's run after
  // this one then finds a third of these older than its 60 days, as it would not in a top-up to 2 million.
  const before = await countEvents(target);
  log(`growth ${kind}: bulk-loading ${settings.growthEvents.toLocaleString('en')} events over ${settings.growthDays} days onto ${before.toLocaleString('en')}`);
  const { loaded, seconds } = await bulkLoad(target, setup, {
    events: before + settings.growthEvents,
    workers: settings.workers,
    days: settings.growthDays,
    templates,
  });
  log(`growth ${kind}: loaded ${loaded.toLocaleString('en')} rows in ${seconds.toFixed(1)} s`);
  const stored = await countEvents(target);
  const figures = await measureService(target, setup, `service ${kind} with ${stored.toLocaleString('en')} events stored`);
  let growthWithRetention: DatabaseFigures['growthWithRetention'];
  if (settings.retention) {
    const storedThen = await countEvents(target);
    const swept = await measureService(target, setup, `service ${kind} with ${storedThen.toLocaleString('en')} events stored and the retention sweep running`, {
      env: { EVENT_RETENTION_DAYS: String(settings.retentionDays) },
    });
    const rowsDeleted = storedThen + swept.eventsStored.promisedBy202 - (await countEvents(target));
    log(`retention ${kind}: the sweep deleted ${rowsDeleted.toLocaleString('en')} rows during the run`);
    // Each run adds 600,000-800,000 events of the last 7 days, and the store slows as they grow (on PostgreSQL the
    // next run wrote twice the WAL per event, most of it whole pages after checkpoints): measured against the growth
    // run alone, a sweep that deleted nothing came out at 0.80x and 0.93x. So the runs without it on both sides.
    const afterStored = await countEvents(target);
    const after = await measureService(target, setup, `service ${kind} with ${afterStored.toLocaleString('en')} events stored, after the sweep's run`);
    growthWithRetention = { ...swept, retentionDays: settings.retentionDays, eventsInTable: storedThen, rowsDeleted, after };
  }
  const emptyAfter = await measureIngest(kind, 'growth-empty-after', true, `growth ${kind}: empty store after`);
  const emptyBeside = [emptyBefore.figures.eventsPerSecond, emptyAfter.figures.eventsPerSecond];
  return {
    growth: { ...figures, bulkLoad: { loaded, seconds }, eventsInTable: stored, emptyBeside },
    growthWithRetention,
    growthRatio: growthToEmpty({ eventsPerSecond: figures.eventsPerSecond, emptyBeside }),
  };
}

/** Puts the benchmark's manifest of 8 statistics through a briefly started service. */
async function installManifest(target: Target, setup: Setup, label: string): Promise<void> {
  const slug = await slugOf(target, setup.appId);
  const briefly = await startService(target);
  try {
    await putManifest(`http://127.0.0.1:${briefly.port}`, setup.key, benchManifest(slug, label));
  } finally {
    await briefly.stop();
  }
}

/** Ingest without and with the manifest, in an order that cancels a drift of the machine's speed: see measureRollups. */
const MANIFEST_ORDER = [false, true, true, false, true, false, false, true] as const;

/** Ingest on an empty database of its own, with the bench manifest or without one; with it, how fresh the rollups kept. */
async function measureIngest(
  kind: Kind,
  name: string,
  withManifest: boolean,
  label = `rollups ${kind}`,
): Promise<{ figures: ServiceFigures; delay: RollupFigures['delay'] }> {
  const target = await freshTarget(kind, name, place);
  try {
    const setup = setUp(target);
    let delay: RollupFigures['delay'] = { p50UpToSeconds: 0, p99UpToSeconds: 0, batches: 0, backlogAtEnd: { batches: 0, oldestSeconds: 0 }, drainedSeconds: 0 };
    if (!withManifest) return { figures: await measureService(target, setup, `${label}: ingest without a manifest`), delay };
    await installManifest(target, setup, 'first');
    const metricsPort = await freePort();
    const figures = await measureService(target, setup, `${label}: ingest with 8 statistics`, {
      env: { METRICS_PORT: String(metricsPort) },
      beforeStop: async () => {
        const backlogAtEnd = await backlog(target);
        const started = performance.now();
        while ((await backlog(target)).batches > 0) await new Promise((r) => setTimeout(r, 200));
        const drainedSeconds = Math.round((performance.now() - started) / 100) / 10;
        delay = { ...(await rollupDelay(metricsPort)), backlogAtEnd, drainedSeconds };
      },
    });
    log(
      `${label}: delay p50 ≤ ${delay.p50UpToSeconds} s, p99 ≤ ${delay.p99UpToSeconds} s over ${delay.batches} batches; backlog at the end ${delay.backlogAtEnd.batches} batches (oldest ${delay.backlogAtEnd.oldestSeconds} s), drained in ${delay.drainedSeconds} s`,
    );
    return { figures, delay };
  } finally {
    await target.drop();
  }
}

/** The later of two delays (by p99, then the oldest batch left when the load stopped). */
function worseDelay(a: RollupFigures['delay'], b: RollupFigures['delay']): RollupFigures['delay'] {
  const fresh = (d: RollupFigures['delay']) => Math.max(d.p99UpToSeconds, d.backlogAtEnd.oldestSeconds);
  return fresh(b) > fresh(a) ? b : a;
}

/**
 * The rollups' figures. Ingest without and with a manifest of 8 statistics, four times each in the
 * order without, with, with, without, with, without, without, with, each on an empty database of its
 * own: the runs compared differ only in the manifest (a run after another would write into a larger
 * store), and a linear drift of the machine's speed cancels out. The sides' medians are compared: a
 * spell in which the whole machine runs a third slower (raw included, seen in 4 of 14 runs on
 * 2026-11-24) took a run of 2026-11-24 21:31 UTC to 20,307 events/s against 27,327-29,735 for the
 * others with the manifest: 7 % off the mean of the other three, 3 % off their median. Then, on another
 * database with the manifest, BENCH_ROLLUP_EVENTS events, a recompute over them with the load running,
 * and the daily reads on that store.
 */
async function measureRollups(kind: Kind, templates: RowTemplate[][]): Promise<RollupFigures> {
  const runs: { manifest: boolean; figures: ServiceFigures; delay: RollupFigures['delay'] }[] = [];
  for (const [i, manifest] of MANIFEST_ORDER.entries()) runs.push({ manifest, ...(await measureIngest(kind, `rollups-ingest-${i}`, manifest)) });
  const withoutManifest = runs.filter((r) => !r.manifest).map((r) => r.figures);
  const withManifest = runs.filter((r) => r.manifest).map((r) => r.figures);
  const delay = runs
    .filter((r) => r.manifest)
    .map((r) => r.delay)
    .reduce(worseDelay);
  const normal = medianEventsPerSecond(withoutManifest);
  const ingestRatio = ratio(medianEventsPerSecond(withManifest), normal);
  log(
    `rollups ${kind}: with a manifest ${ingestRatio.toFixed(2)}× without (${withManifest.map((f) => f.eventsPerSecond).join(', ')} against ${withoutManifest.map((f) => f.eventsPerSecond).join(', ')} events/s)`,
  );

  const target = await freshTarget(kind, 'rollups', place);
  try {
    const setup = setUp(target);
    const slug = await slugOf(target, setup.appId);
    await installManifest(target, setup, 'first');
    const stored = await countEvents(target);
    log(`rollups ${kind}: bulk-loading events up to ${settings.rollupEvents.toLocaleString('en')}`);
    const loaded = await bulkLoad(target, setup, { events: settings.rollupEvents, workers: settings.workers, days: settings.growthDays, templates });
    log(`rollups ${kind}: loaded ${loaded.loaded.toLocaleString('en')} rows in ${loaded.seconds.toFixed(1)} s (${stored.toLocaleString('en')} were there)`);
    const server = await startService(target);
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const eventsInTable = await countEvents(target);
      // Before the recompute starts: once it runs, the server's own work keeps the machine busy.
      const quietBefore = await waitForQuiet('recompute');
      await putManifest(base, setup.key, benchManifest(slug, 'second'));
      const started = performance.now();
      const done = recomputeDone(target, setup.orgId, 7200);
      log(`rollups ${kind}: recomputing over ${eventsInTable.toLocaleString('en')} events, the load running meanwhile`);
      const during = httpFigures(await drive(server, `Bearer ${setup.key}`, kind === 'postgres'), quietBefore);
      const loadSeconds = (performance.now() - started) / 1000;
      await done;
      const recomputeSeconds = Math.round((performance.now() - started) / 100) / 10;
      log(`rollups ${kind}: recompute done in ${recomputeSeconds} s; ingest meanwhile ${during.eventsPerSecond} events/s`);
      log(`rollups ${kind}: the closed days listed by the service ${(await listsSettled(target, 600)).toFixed(1)} s after the recompute`);
      // As before every measurement: the work a recompute leaves (its WAL copied back, its pages written out) is
      // not the read's, and made the first reads after it up to twice as slow as the last.
      const quiet = await waitForQuiet(`rollups ${kind}: daily reads`);
      const cookie = await ownerSession(target, setup, base);
      const range = lastDays(30);
      const ids = benchManifest(slug, '').map((d) => `statisticId=${String(d.id)}`).join('&');
      const daily = `/api/v1/console/statistics/daily?from=${range.from}&to=${range.to}&${ids}`;
      const reads = [
        await timeRead(base, cookie, 'organization (groupBy=none)', daily, settings.rollupReads),
        await timeRead(base, cookie, `per worker, all ${settings.workers} workers (groupBy=worker&limit=1000)`, `${daily}&groupBy=worker&limit=1000`, settings.rollupReads),
        await timeRead(base, cookie, 'per worker, first page of 100', `${daily}&groupBy=worker&limit=100`, settings.rollupReads),
      ];
      for (const r of reads) log(`rollups ${kind}: daily ${r.name}: p50 ${r.p50Ms} ms, max ${r.maxMs} ms (in turn ${r.eachMs.join(', ')}), ${r.series} series, ${r.dayCells} day cells, ${r.bytes} bytes`);
      return {
        withoutManifest,
        withManifest,
        ingestRatio,
        delay,
        recompute: {
          eventsInTable,
          seconds: recomputeSeconds,
          loadSeconds: Math.round(loadSeconds),
          during,
          ingestRatio: ratio(during.eventsPerSecond, normal),
        },
        reads,
        readsQuietBefore: quiet,
      };
    } finally {
      await server.stop();
    }
  } finally {
    await target.drop();
  }
}

/** The median run's rate: a run caught in a slow spell of the machine moves it no more than any other run below it. */
function medianEventsPerSecond(figures: ServiceFigures[]): number {
  const rates = figures.map((f) => f.eventsPerSecond).sort((a, b) => a - b);
  const middle = rates.length / 2;
  return Number.isInteger(middle) ? (rates[middle - 1] + rates[middle]) / 2 : rates[Math.floor(middle)];
}

function previousResults(): { file: string; results: Results } | undefined {
  let files: string[];
  try {
    files = readdirSync(settings.resultsDir).filter((f) => f.endsWith('.json') && !f.startsWith('soak-')).sort(); // soak results are another kind
  } catch {
    return undefined;
  }
  const file = files[files.length - 1];
  if (!file) return undefined;
  try {
    return { file, results: JSON.parse(readFileSync(path.join(settings.resultsDir, file), 'utf8')) as Results };
  } catch {
    return undefined;
  }
}

async function machineInfo(postgres: boolean): Promise<Record<string, unknown>> {
  const info: Record<string, unknown> = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    sqlite: (new SqliteDatabase(':memory:').prepare('select sqlite_version() as v').get() as { v: string }).v,
  };
  if (postgres) {
    const c = new Client({ connectionString: settings.postgresUrl });
    await c.connect();
    const q = async (sql: string) => String(Object.values((await c.query(sql)).rows[0] ?? {})[0]);
    info.postgres = await q('show server_version');
    info.postgresSettings = {
      fsync: await q('show fsync'),
      synchronous_commit: await q('show synchronous_commit'),
      shared_buffers: await q('show shared_buffers'),
    };
    await c.end();
  }
  return info;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const previous = previousResults();
  log(`workload: ${settings.bodies} bodies of ${settings.batch} events over ${settings.workers} workers; temp dir ${tmp}`);
  const pool = makePool({ bodies: settings.bodies, batch: settings.batch, workers: settings.workers, seed: 42, nowMs: Date.now() });
  writeFileSync(path.join(tmp, 'bodies.json'), JSON.stringify(pool.bodies));
  const templates = rowTemplates(pool, settings.workers);
  const bodyBytes = Math.round(pool.bodies.reduce((a, b) => a + Buffer.byteLength(b), 0) / pool.bodies.length);
  log(`workload: ${pool.eventBytes} bytes per event, ${bodyBytes} bytes per body`);

  const databases: Results['databases'] = {};
  const kinds: Kind[] = [];
  for (const kind of settings.databases) {
    if (kind === 'postgres') {
      const why = await postgresReachable(settings.postgresUrl);
      if (why) {
        log(`SKIPPED: PostgreSQL at ${settings.postgresUrl} is unreachable (${why})`);
        databases.postgres = { skipped: `unreachable: ${why}` };
        continue;
      }
    }
    kinds.push(kind);
  }
  const machine = await machineInfo(kinds.includes('postgres'));

  const bare = await measureBare();
  for (const kind of kinds) databases[kind] = await measureDatabase(kind, templates, bare);

  const { resultsDir: _dir, ...recordedSettings } = settings;
  const results: Results = {
    startedAt,
    totalSeconds: Math.round(bench.elapsedSeconds()),
    machine,
    settings: recordedSettings,
    workload: {
      endpoint: 'POST /api/v1/ingest/events',
      eventsPerRequest: settings.batch,
      bytesPerEvent: pool.eventBytes,
      bytesPerBody: bodyBytes,
      distinctBodies: settings.bodies,
      workers: settings.workers,
      eventTypes: allowedEventTypes,
    },
    bare,
    databases,
    targets: [],
  };
  results.targets = evaluateTargets(results);

  mkdirSync(settings.resultsDir, { recursive: true });
  const file = path.join(settings.resultsDir, `${stamp}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');

  process.stdout.write(`\n${formatReport(results, previous)}\nResults: ${path.relative(projectRoot, file)}\n`);
}

bench.run(main);

// What the benchmarks share: fresh databases to run the service on, the organization
// they send to, and the bulk load that gives a database its 2 million events.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import type { DatabaseConfig } from '../../src/config';
import { openDatabase } from '../../src/data/db';
import type { Kind } from './report';
import { bulkLoadPostgres, bulkLoadSqlite, ensureWorkers, type RawScope } from './raw';
import { ingestctl } from './server-process';
import { allowedEventTypes, type RowTemplate } from './workload';

export function numberEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

/** BENCH_DATABASES: the databases to measure, in order (sqlite,postgres by default). */
export function databasesEnv(): Kind[] {
  return (process.env.BENCH_DATABASES ?? 'sqlite,postgres')
    .split(',')
    .map((d) => d.trim())
    .filter(Boolean)
    .map((kind) => {
      if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`BENCH_DATABASES: unknown database "${kind}" (sqlite, postgres)`);
      return kind;
    });
}

/** BENCH_POSTGRES_URL: the PostgreSQL server the benchmarks create their schemas in. */
export const benchPostgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Undefined when PostgreSQL answers at `url`, else why not. */
export async function postgresReachable(url: string): Promise<string | undefined> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

export interface Target {
  kind: Kind;
  databaseUrl: string;
  config: DatabaseConfig;
  drop(): Promise<void>;
}

export interface TargetPlace {
  /** Where SQLite files go. */
  tmp: string;
  postgresUrl: string;
  /** Names the benchmark's PostgreSQL connections, so that their backends' CPU time can be told from others'. */
  applicationName: string;
  /** drop() of each PostgreSQL schema is also registered here, for an interrupted run. */
  cleanups: (() => Promise<void> | void)[];
}

/** A fresh SQLite file in the temp dir, or a fresh PostgreSQL schema (dropped by drop()). */
export async function freshTarget(kind: Kind, name: string, place: TargetPlace): Promise<Target> {
  if (kind === 'sqlite') {
    const file = path.join(place.tmp, `${name}.db`);
    const drop = async () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    };
    return { kind, databaseUrl: `sqlite:${file}`, config: { kind: 'sqlite', path: file }, drop };
  }
  const schema = `bench_${process.pid}_${name.replace(/\W/g, '_')}`;
  const admin = new Client({ connectionString: place.postgresUrl });
  await admin.connect();
  await admin.query(`drop schema if exists ${schema} cascade`);
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(place.postgresUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  url.searchParams.set('application_name', place.applicationName);
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    const c = new Client({ connectionString: place.postgresUrl });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  };
  place.cleanups.push(drop);
  return { kind, databaseUrl: url.toString(), config: { kind: 'postgres', url: url.toString() }, drop };
}

export async function countEvents(target: Target): Promise<number> {
  const db = openDatabase(target.config);
  try {
    const row = await db.kysely.selectFrom('events').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  } finally {
    await db.close();
  }
}

export interface Setup {
  orgId: string;
  appId: string;
  key: string;
  ownerEmail: string;
}

/** An organization with unlimited quota, an app allowing the workload's event types, a key. */
export function setUp(target: Target): Setup {
  const qs = ingestctl(target.databaseUrl, ['quickstart']);
  const orgId = String(qs.organizationId);
  const appId = String(qs.appId);
  ingestctl(target.databaseUrl, ['app', 'allow', '--app', appId, ...allowedEventTypes]);
  ingestctl(target.databaseUrl, ['org', 'set-plan', '--org', orgId, '--max-events-per-month', 'unlimited', '--api', 'enabled']);
  return { orgId, appId, key: String(qs.key), ownerEmail: String(qs.ownerEmail) };
}

/**
 * Fills the events table up to `events` rows over the workload's `workers`, spread over
 * the `days` before now, straight through the driver (see raw.ts).
 */
export async function bulkLoad(
  target: Target,
  setup: Setup,
  options: { events: number; workers: number; days: number; templates: RowTemplate[][] },
): Promise<{ loaded: number; seconds: number; scope: RawScope }> {
  const db = openDatabase(target.config);
  let scope: RawScope;
  try {
    scope = await ensureWorkers(db, setup.appId, options.workers);
  } finally {
    await db.close();
  }
  const loaded =
    target.kind === 'sqlite'
      ? await bulkLoadSqlite((target.config as { path: string }).path, options.events, options.templates, scope, options.days)
      : await bulkLoadPostgres(target.databaseUrl, options.events, options.templates, scope, options.days);
  return { ...loaded, scope };
}

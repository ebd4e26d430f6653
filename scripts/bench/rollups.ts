// What `make bench` needs for the daily rollups' figures: the manifest of 8
// statistics matching most of the workload's events, the rollup delay read
// from the server's /metrics, the outbox backlog and the recompute's end read
// from the database, and timed reads of /statistics/daily.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { openDatabase } from '../../src/data/db';
import { unlistedDays } from '../../src/data/rollups';
import { closedBefore } from '../../src/domain/rollups';
import { setPassword } from '../../src/domain/sessions';
import type { ReadFigures, ReadRequest } from './read-client';
import type { Setup, Target } from './targets';
import { eventKinds } from './workload';

const PASSWORD = 'bench-rollups-password-1';
const execFileAsync = promisify(execFile);

/** Eight definitions over the workload's event kinds; together they match every event. */
export function benchManifest(slug: string, label: string): Record<string, unknown>[] {
  const all = { sourceEventTypes: eventKinds.map((k) => k.eventType), sourceEventCategories: eventKinds.map((k) => k.category) };
  const one = (i: number) => ({ sourceEventTypes: [eventKinds[i]?.eventType], sourceEventCategories: [eventKinds[i]?.category] });
  const base = (name: string, pillar: string) => ({ id: `${slug}.${name}`, label: `${label} ${name}`, pillar, format: 'number' });
  return [
    { ...base('tickets', 'DELIVERY'), aggregation: 'count', ...one(0) },
    { ...base('builds', 'DELIVERY'), aggregation: 'count', ...one(1) },
    { ...base('reviews', 'REVIEW'), aggregation: 'rate', ...one(2) },
    { ...base('meeting-minutes', 'COMMUNICATION'), aggregation: 'durationMinutes', format: 'duration_minutes', ...one(3) },
    { ...base('doc-attempts', 'KNOWLEDGE'), aggregation: 'sumField', valueField: 'attempt', ...one(4) },
    { ...base('agent-tasks', 'ACTIVITY'), aggregation: 'count', ...one(5) },
    { ...base('events', 'ACTIVITY'), aggregation: 'count', ...all },
    { ...base('first-attempt', 'DELIVERY'), aggregation: 'ratio', valueField: 'attempt', format: 'percent', ...all },
  ];
}

/** The app's slug (the manifest's ids start with it). */
export async function slugOf(target: Target, appId: string): Promise<string> {
  const db = openDatabase(target.config);
  try {
    return (await db.kysely.selectFrom('apps').select('slug').where('id', '=', appId).executeTakeFirstOrThrow()).slug;
  } finally {
    await db.close();
  }
}

export async function putManifest(base: string, key: string, statistics: unknown[]): Promise<void> {
  const res = await fetch(`${base}/api/v1/apps/statistics`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ statistics }),
  });
  if (res.status !== 200) throw new Error(`PUT statistics answered ${res.status}: ${await res.text()}`);
}

/** p50 and p99 of ingest_rollup_delay_seconds as the upper bounds of their buckets (seconds), and how many batches it counts. */
export async function rollupDelay(metricsPort: number): Promise<{ p50UpToSeconds: number; p99UpToSeconds: number; batches: number }> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const buckets = [...text.matchAll(/^ingest_rollup_delay_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)].map((m) => ({
    le: m[1] === '+Inf' ? Infinity : Number(m[1]),
    n: Number(m[2]),
  }));
  const count = buckets.at(-1)?.n ?? 0;
  const upTo = (q: number) => buckets.find((b) => b.n >= q * count)?.le ?? 0;
  return { p50UpToSeconds: upTo(0.5), p99UpToSeconds: upTo(0.99), batches: count };
}

/** Batches waiting in the outbox and the age of the oldest (seconds). */
export async function backlog(target: Target): Promise<{ batches: number; oldestSeconds: number }> {
  const db = openDatabase(target.config);
  try {
    const row = await db.kysely
      .selectFrom('rollup_outbox')
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('applied_generation', 'is', null)
      .executeTakeFirstOrThrow();
    return { batches: Number(row.n), oldestSeconds: row.oldest ? Math.round((Date.now() - Date.parse(row.oldest)) / 100) / 10 : 0 };
  } finally {
    await db.close();
  }
}

/** Resolves when the organization has no recompute left, polling the database; seconds waited. */
export async function recomputeDone(target: Target, orgId: string, timeoutSeconds: number): Promise<number> {
  const started = performance.now();
  const db = openDatabase(target.config);
  try {
    for (;;) {
      const state = await db.kysely.selectFrom('rollup_state').select('target_generation').where('org_id', '=', orgId).executeTakeFirst();
      if (state && state.target_generation === null) return (performance.now() - started) / 1000;
      if ((performance.now() - started) / 1000 > timeoutSeconds) throw new Error(`the recompute did not end within ${timeoutSeconds} s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await db.close();
  }
}

/**
 * Until the service has listed every closed day of the store's answering generation
 * (src/data/migrations/008_day_lists.ts), as it does in the background once days are
 * filled or recomputed: the reads are then of a settled store. Answers the seconds it took.
 */
export async function listsSettled(target: Target, timeoutSeconds: number): Promise<number> {
  const started = performance.now();
  const db = openDatabase(target.config);
  try {
    while ((await unlistedDays(db.kysely, closedBefore(), 1)).length > 0) {
      if ((performance.now() - started) / 1000 > timeoutSeconds) throw new Error(`the closed days were not listed within ${timeoutSeconds} s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return (performance.now() - started) / 1000;
  } finally {
    await db.close();
  }
}

export async function ownerSession(target: Target, setup: Setup, base: string): Promise<string> {
  const db = openDatabase(target.config);
  try {
    const member = await db.kysely.selectFrom('members').select('id').where('email_lower', '=', setup.ownerEmail.toLowerCase()).executeTakeFirstOrThrow();
    await setPassword(db, member.id, PASSWORD);
  } finally {
    await db.close();
  }
  const res = await fetch(`${base}/api/v1/console/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: setup.ownerEmail, password: PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
  return (res.headers.get('set-cookie') ?? '').split(';')[0] as string;
}

/**
 * `times` sequential GETs of `pathAndQuery`, each read to its end; every one must answer 200. Made from a
 * process of their own (read-client.ts): by the time make bench reads, its harness has driven minutes of
 * load, and its heap's collections fell on the reads. Measured (PostgreSQL, 2,000,000 events, 12 reads of
 * every worker after the recompute): p50 210 and 222 ms from the harness, 172 ms from a process of their own.
 */
export async function timeRead(base: string, cookie: string, name: string, pathAndQuery: string, times: number): Promise<ReadFigures> {
  const request: ReadRequest = { base, cookie, name, pathAndQuery, times };
  const { stdout } = await execFileAsync(process.execPath, [path.join(__dirname, 'read-client.js'), JSON.stringify(request)]);
  return JSON.parse(stdout) as ReadFigures;
}

/** The last `days` whole days before today (UTC), as the daily endpoint's query. */
export function lastDays(days: number): { from: string; to: string } {
  const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
  return { from: day(days), to: day(1) };
}

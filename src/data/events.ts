import { sql } from 'kysely';
import type { Dialect } from './db';
import type { EventRow, Executor, NewEventRow } from './schema';

// SQLite caps bound parameters per statement; 200 rows of 16 columns stay well inside.
const ROWS_PER_SQLITE_INSERT = 200;

const columns: ReadonlyArray<readonly [keyof NewEventRow & string, 'text' | 'integer']> = [
  ['id', 'text'],
  ['org_id', 'text'],
  ['app_id', 'text'],
  ['worker_id', 'text'],
  ['integration_id', 'text'],
  ['kind', 'text'],
  ['event_type', 'text'],
  ['category', 'text'],
  ['ts', 'text'],
  ['duration', 'integer'],
  ['pillar', 'text'],
  ['statistic_id', 'text'],
  ['metadata', 'text'],
  ['metrics', 'text'],
  ['request_id', 'text'],
  ['received_at', 'text'],
];

/**
 * Inserts timeline rows. On PostgreSQL as one fixed statement over column
 * arrays (unnest): 16 parameters whatever the batch size, instead of 16 per row
 * that the server would parse and plan anew for every batch.
 */
export async function insertEvents(db: Executor, dialect: Dialect, rows: NewEventRow[]): Promise<void> {
  if (rows.length === 0) return;
  if (dialect === 'postgres') {
    const arrays = columns.map(([name, type]) => sql`${rows.map((row) => row[name] ?? null)}::${sql.raw(type)}[]`);
    await sql`insert into events (${sql.join(columns.map(([name]) => sql.ref(name)))}) select * from unnest(${sql.join(arrays)})`.execute(db);
    return;
  }
  for (let i = 0; i < rows.length; i += ROWS_PER_SQLITE_INSERT) {
    await db.insertInto('events').values(rows.slice(i, i + ROWS_PER_SQLITE_INSERT)).execute();
  }
}

/** One worker's timeline, newest first (served by the events_worker_ts index). */
export async function workerTimeline(db: Executor, workerId: string, limit = 100): Promise<EventRow[]> {
  return db.selectFrom('events').selectAll().where('worker_id', '=', workerId).orderBy('ts', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** The organization's timeline for one UTC day, oldest first (served by the events_org_ts index). */
export async function organizationDay(db: Executor, orgId: string, day: string): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('ts', '>=', `${day}T00:00:00.000Z`)
    .where('ts', '<', nextDay(day))
    .orderBy('ts')
    .orderBy('id')
    .execute();
}

function nextDay(day: string): string {
  const date = new Date(`${day}T00:00:00.000Z`);
  date.setUTCDate(date.getUTCDate() + 1);
  return date.toISOString();
}

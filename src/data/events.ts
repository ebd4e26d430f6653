import type { EventRow, Executor, NewEventRow } from './schema';

// Both dialects cap bound parameters per statement; 200 rows of 16 columns stay well inside.
const ROWS_PER_INSERT = 200;

export async function insertEvents(db: Executor, rows: NewEventRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    await db.insertInto('events').values(rows.slice(i, i + ROWS_PER_INSERT)).execute();
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

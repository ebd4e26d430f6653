import type { Executor } from './schema';

/** `YYYY-MM` of the calendar month (UTC) that `at` falls in. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

export interface MonthlyQuota {
  limit: number | null;
  used: number;
}

export async function monthlyQuota(db: Executor, orgId: string, month: string): Promise<MonthlyQuota> {
  const [org, usage] = await Promise.all([
    db.selectFrom('organizations').select('max_events_per_month').where('id', '=', orgId).executeTakeFirst(),
    db.selectFrom('monthly_usage').select('event_count').where('org_id', '=', orgId).where('month', '=', month).executeTakeFirst(),
  ]);
  return { limit: org?.max_events_per_month ?? null, used: usage?.event_count ?? 0 };
}

/**
 * Counts up to `wanted` events against the month and returns how many fit. The
 * increment is one UPDATE, which holds the row until the caller's transaction
 * ends, so concurrent batches (on any instance) queue behind it and can never
 * oversell the quota; the overshoot is taken back before the lock is released.
 */
export async function reserveEvents(db: Executor, orgId: string, month: string, wanted: number): Promise<number> {
  if (wanted === 0) return 0;
  await db.insertInto('monthly_usage').values({ org_id: orgId, month }).onConflict((oc) => oc.columns(['org_id', 'month']).doNothing()).execute();
  const { event_count: total } = await db
    .updateTable('monthly_usage')
    .set((eb) => ({ event_count: eb('event_count', '+', wanted) }))
    .where('org_id', '=', orgId)
    .where('month', '=', month)
    .returning('event_count')
    .executeTakeFirstOrThrow();
  const org = await db.selectFrom('organizations').select('max_events_per_month').where('id', '=', orgId).executeTakeFirst();
  const limit = org?.max_events_per_month ?? null;
  if (limit === null || total <= limit) return wanted;
  const granted = Math.max(0, wanted - (total - limit));
  await db
    .updateTable('monthly_usage')
    .set((eb) => ({ event_count: eb('event_count', '-', wanted - granted) }))
    .where('org_id', '=', orgId)
    .where('month', '=', month)
    .execute();
  return granted;
}

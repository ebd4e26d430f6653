import { createHash } from 'node:crypto';
import { prepareOnEveryConnection } from './postgres';
import type { Executor } from './schema';

/** `YYYY-MM` of the calendar month (UTC) that `at` falls in. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** What the events endpoint needs to judge a batch of one app, read in one query. */
export interface IngestRules {
  allowedEventTypes: ReadonlySet<string>;
  statisticIds: ReadonlySet<string>;
  /** The organization's monthly event quota and the events already counted this month; null when unlimited. */
  quota: { limit: number; used: number } | null;
  version: RulesVersion;
}

/**
 * What the rules were read from, as storeBatchInOneStatement compares them
 * with what is stored: the md5 of the app's allowedEventTypes and manifest
 * texts, and the organization's quota.
 */
export interface RulesVersion {
  allowedEventTypes: string;
  definitions: string;
  quota: number | null;
}

export async function ingestRules(db: Executor, appId: string, month: string): Promise<IngestRules> {
  const query = db
    .selectFrom('apps as a')
    .innerJoin('organizations as o', 'o.id', 'a.org_id')
    .leftJoin('statistic_manifests as m', 'm.app_id', 'a.id')
    .leftJoin('monthly_usage as u', (join) => join.onRef('u.org_id', '=', 'o.id').on('u.month', '=', month))
    .select(['a.allowed_event_types', 'm.definitions', 'o.max_events_per_month', 'u.event_count'])
    .where('a.id', '=', appId)
    .compile();
  // Read for every batch whose app's rules are not kept: planned once per connection.
  prepareOnEveryConnection(query.sql);
  const row = (await db.executeQuery(query)).rows[0];
  if (!row) throw new Error(`no app ${appId}`);
  const definitions = row.definitions ? (JSON.parse(row.definitions) as Array<{ id: string }>) : [];
  const limit = row.max_events_per_month;
  return {
    allowedEventTypes: new Set(JSON.parse(row.allowed_event_types) as string[]),
    statisticIds: new Set(definitions.map((d) => d.id)),
    quota: limit === null ? null : { limit, used: row.event_count ?? 0 },
    version: { allowedEventTypes: md5(row.allowed_event_types), definitions: md5(row.definitions ?? ''), quota: limit },
  };
}

/** As PostgreSQL's md5(text) computes it, to compare there. */
function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/**
 * Counts up to `wanted` events against the month and returns how many fit
 * under `quota`. The count is one upsert, which holds the row until the
 * caller's transaction ends, so concurrent batches (on any instance) queue
 * behind it and can never oversell the quota; an overshoot is taken back
 * before the lock is released.
 */
export async function reserveEvents(db: Executor, orgId: string, month: string, wanted: number, quota: number | null): Promise<number> {
  if (wanted === 0) return 0;
  const { event_count: total } = await db
    .insertInto('monthly_usage')
    .values({ org_id: orgId, month, event_count: wanted })
    .onConflict((oc) => oc.columns(['org_id', 'month']).doUpdateSet((eb) => ({ event_count: eb('monthly_usage.event_count', '+', wanted) })))
    .returning('event_count')
    .executeTakeFirstOrThrow();
  if (quota === null || total <= quota) return wanted;
  const granted = Math.max(0, wanted - (total - quota));
  await db
    .updateTable('monthly_usage')
    .set((eb) => ({ event_count: eb('event_count', '-', wanted - granted) }))
    .where('org_id', '=', orgId)
    .where('month', '=', month)
    .execute();
  return granted;
}

/** Events counted against the organization's quota in the month (`YYYY-MM`). */
export async function eventsCounted(db: Executor, orgId: string, month: string): Promise<number> {
  const row = await db
    .selectFrom('monthly_usage')
    .select('event_count')
    .where('org_id', '=', orgId)
    .where('month', '=', month)
    .executeTakeFirst();
  return row?.event_count ?? 0;
}

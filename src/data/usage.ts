import { createHash } from 'node:crypto';
import { sql, type Expression } from 'kysely';
import type { Dialect } from './db';
import { prepareOnEveryConnection } from './postgres';
import type { Executor } from './schema';

/**
 * An organization's count for a month is its row in monthly_usage plus its
 * rows in monthly_usage_slots. Under a quota every reservation locks them all
 * and counts into monthly_usage. Without one, PostgreSQL's batches (in one
 * statement, src/data/event-batch.ts, or in a transaction) count into their
 * backend's slot (backendSlot): one row for every batch had each batch of the
 * organization wait for the one before to commit (make bench: 31,500
 * against 36,200 events/s without counting, 33 against 27 ms of
 * PostgreSQL's CPU per 1,000 events).
 */
export const SPREAD_SLOTS = 16;
const SLOTS = Array.from({ length: SPREAD_SLOTS }, (_, i) => i + 1);
/** PostgreSQL: the slot of the connection's backend, 1 to SPREAD_SLOTS. */
export const backendSlot = sql<number>`1 + pg_backend_pid() % ${sql.lit(SPREAD_SLOTS)}`;

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
 * What the rules were read from, as storeBatchesInOneStatement compares them
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
    .select(['a.allowed_event_types', 'm.definitions', 'o.max_events_per_month'])
    .select((eb) => usedIn(eb.ref('o.id'), month).as('event_count'))
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
    quota: limit === null ? null : { limit, used: row.event_count },
    version: { allowedEventTypes: md5(row.allowed_event_types), definitions: md5(row.definitions ?? ''), quota: limit },
  };
}

/** As PostgreSQL's md5(text) computes it, to compare there. */
function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/**
 * Counts up to `wanted` events against the month and returns how many fit
 * under `quota`. The count is one upsert, which holds the month's row until
 * the caller's transaction ends, so concurrent batches (on any instance)
 * queue behind it and can never oversell the quota; on PostgreSQL the
 * slots are then locked too (made first when missing), so that no batch
 * counting into one is missed. An overshoot is taken back before the locks
 * are released. Without a quota the events are only counted, on PostgreSQL
 * into the backend's slot: batches of a new organization, which create its
 * workers in a transaction each, queued behind the month's row (a
 * 50-connection benchmark run).
 */
export async function reserveEvents(
  db: Executor,
  dialect: Dialect,
  orgId: string,
  month: string,
  wanted: number,
  quota: number | null,
): Promise<number> {
  if (wanted === 0) return 0;
  if (quota === null) {
    await (dialect === 'postgres' ? countIntoSlot(db, orgId, month, wanted) : countInto(db, orgId, month, wanted));
    return wanted;
  }
  const total = await countInto(db, orgId, month, wanted);
  // Only PostgreSQL's batches without a quota count into slots; SQLite has none.
  const used = total - wanted + (dialect === 'postgres' ? await lockSlots(db, orgId, month) : 0);
  const granted = Math.max(0, Math.min(wanted, quota - used));
  if (granted < wanted) await countInto(db, orgId, month, granted - wanted);
  return granted;
}

/** Adds `n` to the month's row, made when missing; the row's count after it. */
async function countInto(db: Executor, orgId: string, month: string, n: number): Promise<number> {
  const { event_count: total } = await db
    .insertInto('monthly_usage')
    .values({ org_id: orgId, month, event_count: n })
    .onConflict((oc) => oc.columns(['org_id', 'month']).doUpdateSet((eb) => ({ event_count: eb('monthly_usage.event_count', '+', n) })))
    .returning('event_count')
    .executeTakeFirstOrThrow();
  return total;
}

/** PostgreSQL: adds `n` to the backend's slot of the month, made when missing. */
async function countIntoSlot(db: Executor, orgId: string, month: string, n: number): Promise<void> {
  await db
    .insertInto('monthly_usage_slots')
    .values({ org_id: orgId, month, slot: backendSlot, event_count: n })
    .onConflict((oc) =>
      oc.columns(['org_id', 'month', 'slot']).doUpdateSet((eb) => ({ event_count: eb('monthly_usage_slots.event_count', '+', n) })),
    )
    .execute();
}

/**
 * Locks the month's slots in order, every one made first when missing (the
 * one-statement path finds them all or leaves the batch to reserveEvents),
 * and returns what they hold.
 */
async function lockSlots(db: Executor, orgId: string, month: string): Promise<number> {
  await db
    .insertInto('monthly_usage_slots')
    .values(SLOTS.map((slot) => ({ org_id: orgId, month, slot, event_count: 0 })))
    .onConflict((oc) => oc.doNothing())
    .execute();
  const slots = await db
    .selectFrom('monthly_usage_slots')
    .select('event_count')
    .where('org_id', '=', orgId)
    .where('month', '=', month)
    .orderBy('slot')
    .forUpdate()
    .execute();
  return slots.reduce((sum, row) => sum + row.event_count, 0);
}

/** Events counted against the organization's quota in the month (`YYYY-MM`). */
export async function eventsCounted(db: Executor, orgId: string, month: string): Promise<number> {
  const row = await db.selectNoFrom((eb) => usedIn(eb.val(orgId), month).as('used')).executeTakeFirstOrThrow();
  return row.used;
}

/** The events counted in the month: its row and its slots together. */
function usedIn(orgId: Expression<string>, month: string) {
  return sql<number>`cast(
    coalesce((select u.event_count from monthly_usage u where u.org_id = ${orgId} and u.month = ${month}), 0)
    + coalesce((select sum(s.event_count) from monthly_usage_slots s where s.org_id = ${orgId} and s.month = ${month}), 0)
    as integer)`;
}

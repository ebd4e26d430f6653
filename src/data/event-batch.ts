import { sql } from 'kysely';
import type { Schema } from '../contract/types';
import type { EventOrigin } from './events';
import type { ExternalIdLinks } from './link-cache';
import { prepareOnEveryConnection } from './postgres';
import type { Executor } from './schema';
import { backendSlot, SPREAD_SLOTS, type RulesVersion } from './usage';

/** An event to store, with its index in the request and its id if stored. */
export interface BatchEvent {
  index: number;
  id: string;
  ts: string;
  event: Schema<'IngestEvent'>;
  /** The event's metadata as stored, JSON text; null when none. */
  metadataJson: string | null;
}

/** A batch for the statement: where it came from and its events. */
export interface StatementBatch {
  origin: EventOrigin;
  events: BatchEvent[];
}

/**
 * What one statement decided for the batches it stored, in their order: the
 * indexes of each batch's events whose workerId is not the organization's,
 * how many of the rest it stored (the first that fit under the quota, in
 * order, batch after batch) and the worker each of those was stored for.
 */
export interface StatementOutcome {
  unknownWorkerIds: number[];
  granted: number;
  workerIds: string[];
}

interface Outcome {
  /** The rules the batches were judged by are not the stored ones any more: nothing was written. */
  stale: boolean;
  /** An actor needs a worker created or an externalId linked, or the month has no usage row yet to lock: nothing was written. */
  declined: boolean;
  granted: number | null;
  /** [batch, index] of each event whose workerId is not the organization's. */
  unknown: [number, number][] | null;
  /** The worker of each event stored, batch after batch. */
  workers: string[] | null;
  /** The worker of each externalId the statement looked up and found. */
  links: Record<string, string> | null;
}

/**
 * U+0001 between the events' metadata texts: JSON.stringify escapes every control character inside a string
 * ("\u0001") and writes none outside one, so it never occurs in the texts it joins.
 */
const METADATA_SEPARATOR = '\u0001';

/**
 * PostgreSQL: stores batches of one app, whose actors all name workers that
 * exist, in one statement, one round trip: it resolves the actors (workerId in the
 * organization, else the app's externalId link, else, without an externalId,
 * the directory's email), counts the events against the month (under a
 * quota, locking the month's usage row and slots and granting what fits, so
 * concurrent batches on any instance queue behind it as with reserveEvents;
 * without one, into its backend's slot) and inserts the first
 * events that fit, in order, batch after batch, with the rollups' outbox row of each batch: as if they
 * were stored one after the other, but committed once. The events travel as two text parameters
 * (statementParameters), which the driver sends as is (column arrays cost it an escape per element).
 * An externalId whose worker `links` knows is not looked up (ExternalIdLinks); the links the statement
 * found are learned there.
 * Given the version of the rules the batches were judged by (`judgedBy`), it
 * writes only if they are still the stored ones: 'rules_changed' when not.
 * 'declined' when a batch needs what only the step-by-step path does
 * (creating a worker, linking an externalId, the month's usage row and slots
 * under a quota). Either way nothing was written. One statement is atomic:
 * run on its own, it commits alone.
 */
export async function storeBatchesInOneStatement(
  db: Executor,
  principal: EventOrigin['principal'],
  month: string,
  quota: number | null,
  batches: StatementBatch[],
  judgedBy: RulesVersion | null,
  links?: ExternalIdLinks,
): Promise<StatementOutcome[] | 'declined' | 'rules_changed'> {
  const { orgId, appId, integrationId } = principal;
  const { rows, metadata } = statementParameters(
    batches.map((b) => b.events),
    (externalId) => links?.workerOf(appId, externalId),
  );
  const requestIds = batches.map((b) => b.origin.requestId);
  const receivedAts = batches.map((b) => b.origin.receivedAt.toISOString());
  const firsts = batches.map((b) => b.events[0]?.id ?? null);
  const query = sql<Outcome>`
    with p as (
      select ${orgId}::text as org_id, ${appId}::text as app_id, ${month}::text as month, ${quota}::integer as quota,
             ${firsts}::text[] as firsts
    ),
    current_rules as (
      select ${judgedBy?.allowedEventTypes ?? null}::text is null or exists (
        select from apps a join organizations o on o.id = a.org_id left join statistic_manifests m on m.app_id = a.id
        where a.id = p.app_id and md5(a.allowed_event_types) = ${judgedBy?.allowedEventTypes ?? null}::text
          and md5(coalesce(m.definitions, '')) = ${judgedBy?.definitions ?? null}::text
          and o.max_events_per_month is not distinct from ${judgedBy?.quota ?? null}::integer
      ) as ok
      from p
    ),
    -- An event's metadata is its piece of the text, verbatim: '' (no metadata) is never JSON text. Fewer pieces than
    -- rows (one event, without metadata, gives none) leave the rest null, which is what they stand for.
    input as (
      select (r->>0)::integer as o, r->>1 as id, r->>2 as w, r->>3 as x, r->>4 as e, r->>5 as ts, r->>6 as t,
             r->>7 as c, (r->>8)::integer as d, r->>9 as pl, r->>10 as s, nullif(md, '') as m, (r->>11)::integer as b,
             r->>12 as k
      from rows from (jsonb_array_elements(${rows}::jsonb), string_to_table(${metadata}::text, ${METADATA_SEPARATOR}::text)) as a(r, md)
    ),
    resolved as (
      select i.*,
        case
          when i.k is not null then i.k
          when i.w is not null then (select k.id from workers k, p where k.id = i.w and k.org_id = p.org_id)
          when i.x is not null then (select l.worker_id from worker_external_ids l, p where l.app_id = p.app_id and l.external_id = i.x)
          else (select k.id from workers k, p where k.org_id = p.org_id and k.email_lower = i.e)
        end as worker_id
      from input i
    ),
    wanted as (
      select not (select ok from current_rules) or coalesce(bool_or(w is null and worker_id is null), false) as declined,
             count(worker_id)::integer as n
      from resolved
    ),
    -- Under a quota, the month's row and then its slots, locked as reserveEvents locks them: all there (else
    -- reserveEvents makes them), so that no batch in flight counting into a slot is missed (src/data/usage.ts).
    locked as (
      select u.event_count from monthly_usage u, p
      where u.org_id = p.org_id and u.month = p.month and p.quota is not null and not (select declined from wanted)
      for update of u
    ),
    locked_slots as (
      select s.event_count from monthly_usage_slots s, p
      where s.org_id = p.org_id and s.month = p.month and exists (select from locked)
      order by s.slot
      for update of s
    ),
    grant_ as (
      select case
        when (select declined from wanted) then null
        when n = 0 or p.quota is null then n
        when not exists (select from locked)
          or (select count(*) from locked_slots) < ${sql.lit(SPREAD_SLOTS)} then null
        else least(n, greatest(0, p.quota - (select event_count from locked) - (select coalesce(sum(event_count), 0) from locked_slots)))
      end as granted
      from wanted, p
    ),
    counted as (
      insert into monthly_usage (org_id, month, event_count)
      select p.org_id, p.month, g.granted from p, grant_ g where g.granted > 0 and p.quota is not null
      on conflict (org_id, month) do update set event_count = monthly_usage.event_count + excluded.event_count
    ),
    counted_in_slot as (
      insert into monthly_usage_slots (org_id, month, slot, event_count)
      select p.org_id, p.month, ${backendSlot}, g.granted from p, grant_ g where g.granted > 0 and p.quota is null
      on conflict (org_id, month, slot) do update set event_count = monthly_usage_slots.event_count + excluded.event_count
    ),
    -- The events stored: the first that fit, in order, batch after batch; each batch known by its first. Without a
    -- quota every event resolved is stored, and a batch's first is its first candidate unless that one's worker is
    -- unknown: the windows that number the rows, each a copy of every row, cost PostgreSQL about 2 ms per 1,000
    -- events (make bench, three pairs of quick runs: 26-27 against 28-30).
    kept as (
      select r.id, r.worker_id, r.ts, r.t, r.c, r.d, r.pl, r.s, r.m, r.b, r.o,
             case when p.firsts[r.b + 1] in (select id from resolved where worker_id is null)
               then (select f.id from resolved f where f.b = r.b and f.worker_id is not null order by f.o limit 1)
               else p.firsts[r.b + 1]
             end as batch_id
      from resolved r, grant_ g, p
      where ${quota}::integer is null and r.worker_id is not null and g.granted is not null
      union all
      select r.id, r.worker_id, r.ts, r.t, r.c, r.d, r.pl, r.s, r.m, r.b, r.o, first_value(r.id) over (partition by r.b order by r.o)
      from (select *, row_number() over (order by b, o) as rank from resolved where worker_id is not null) r, grant_ g
      where ${quota}::integer is not null and r.rank <= g.granted
    ),
    stored as (
      insert into events (id, org_id, app_id, worker_id, integration_id, ts, request_id, received_at,
                          kind, event_type, category, duration, pillar, statistic_id, metadata, metrics, batch_id)
      select k.id, p.org_id, p.app_id, k.worker_id, ${integrationId}, k.ts, (${requestIds}::text[])[k.b + 1],
             (${receivedAts}::text[])[k.b + 1], 'event', k.t, k.c, k.d, k.pl, k.s, k.m, null, k.batch_id
      from kept k, p
    ),
    -- Each batch's outbox row for the rollups, known by its first event's id, as insertOutbox writes it.
    outbox as (
      insert into rollup_outbox (id, org_id, app_id, first_ts, last_ts, created_at, applied_generation)
      select k.batch_id, p.org_id, p.app_id, min(k.ts collate "C"), max(k.ts collate "C"), ${new Date().toISOString()}, null
      from kept k, p
      group by k.batch_id, p.org_id, p.app_id
    )
    select not (select ok from current_rules) as stale, w.declined or g.granted is null as declined, g.granted,
           (select json_agg(json_build_array(b, o) order by b, o) from resolved where worker_id is null) as unknown,
           (select json_agg(worker_id order by b, o) from kept) as workers,
           (select json_object_agg(x, worker_id) from resolved where x is not null and worker_id is not null) as links
    from wanted w, grant_ g
  `.compile(db);
  prepareOnEveryConnection(query.sql);
  const [outcome] = (await db.executeQuery(query)).rows;
  if (!outcome) throw new Error('the batch statement returned no row');
  if (outcome.stale) return 'rules_changed';
  if (outcome.declined || outcome.granted === null) return 'declined';
  for (const [externalId, worker] of Object.entries(outcome.links ?? {})) links?.learn(appId, externalId, worker);
  return outcomesByBatch(batches, outcome.granted, outcome.unknown ?? [], outcome.workers ?? []);
}

/** The statement's outcome batch by batch: each is granted what is left of the total after those before it. */
function outcomesByBatch(batches: StatementBatch[], granted: number, unknown: [number, number][], workers: string[]): StatementOutcome[] {
  let left = granted;
  let stored = 0;
  return batches.map(({ events }, b) => {
    const unknownWorkerIds = unknown.filter(([batch]) => batch === b).map(([, index]) => index);
    const ofBatch = Math.min(left, events.length - unknownWorkerIds.length);
    left -= ofBatch;
    stored += ofBatch;
    return { unknownWorkerIds, granted: ofBatch, workerIds: workers.slice(stored - ofBatch, stored) };
  });
}

/**
 * The batches' events as the statement's two parameters: `rows`, JSON, an array a row, its columns in the order
 * `input` reads them from jsonb (json_to_recordset over objects built a hash of each object's keys: it cost
 * PostgreSQL 0.62 ms of CPU per batch of make bench's 100 events against 0.46 for arrays, measured), and
 * `metadata`, the events' metadata JSON texts in the same order, as they are, joined by METADATA_SEPARATOR,
 * with '' where an event has none. PostgreSQL splits that text without reading the JSON, which as one json
 * array it read twice, checking it as json and then splitting it into elements: reading the input of make
 * bench's events cost it 2.3-3.9 ms of CPU per 1,000 of them against 3.8-5.6 (eight rounds in turn, see
 * docs/performance-history.md, 2026-11-30 16:46). Inside the rows, each metadata text was a JSON string
 * escaped quote by quote: 0.83-0.93 ms of the HTTP thread per 1,000 events against 0.51-0.52 for the two
 * (built and measured as the driver sends them). And JSON.stringify's text of a whole batch is a tree of
 * pieces that the driver flattens first, 36 µs a statement on the server (measured); a join is one flat string.
 */
export function statementParameters(
  batches: BatchEvent[][],
  linked: (externalId: string) => string | undefined = () => undefined,
): { rows: string; metadata: string } {
  const rows: unknown[][] = [];
  const metadata: string[] = [];
  batches.forEach((events, b) => {
    for (const event of events) {
      rows.push(rowOf(event, b, linked));
      metadata.push(event.metadataJson ?? '');
    }
  });
  return { rows: JSON.stringify(rows), metadata: metadata.join(METADATA_SEPARATOR) };
}

/** An event's row; an externalId whose worker is `linked` travels as that worker (`k`) instead. */
function rowOf({ index, id, ts, event }: BatchEvent, batch: number, linked: (externalId: string) => string | undefined) {
  const { workerId, externalId, email } = event.actor;
  const known = !workerId && externalId ? linked(externalId) : undefined;
  return [
    index,
    id,
    workerId,
    workerId || known ? undefined : externalId,
    workerId || externalId ? undefined : email?.toLowerCase(),
    ts,
    event.eventType,
    event.category,
    event.duration,
    event.pillar,
    event.statisticId,
    batch,
    known,
  ];
}

import type { Transaction } from 'kysely';
import { isDataException, type Dialect } from '../data/db';
import {
  addBatchesInDatabase,
  addParts,
  batchesSpan,
  claimOutbox,
  deleteOutbox,
  eventsByIds,
  manifestsOfOrg,
  markOutboxApplied,
  stateFor,
  type Definition,
  type OutboxBatches,
  type StoredEvent,
} from '../data/rollups';
import type { Database } from '../data/schema';
import { inSavepoint } from '../data/transaction';
import type { WriteJob } from '../data/writer';
import { daysSpanned } from './local-day';
import { PartsAccumulator, type RollupEvent } from './rollup-rules';

// Batches whose events span more (a backfill, say) are summed by the service: the days PostgreSQL is given stay few.
const MAX_BATCH_SPAN_MS = 31 * 86_400_000;

function rollupEventOf(event: StoredEvent): RollupEvent {
  return {
    workerId: event.worker_id,
    ts: event.ts,
    eventType: event.event_type,
    category: event.category,
    statisticId: event.statistic_id,
    duration: event.duration,
    pillar: event.pillar,
    metadata: event.metadata === null ? null : JSON.parse(event.metadata),
  };
}

/** The definitions of each app of the organization, by app id. */
export function definitionsByApp(manifests: { app: { id: string }; definitions: Definition[] }[]): Map<string, Definition[]> {
  return new Map(manifests.map((m) => [m.app.id, m.definitions]));
}

/** Adds stored events to `parts`, each by its app's manifest (`definitions`), on its day in `timeZone`. */
export function addStoredEvents(
  parts: PartsAccumulator,
  events: StoredEvent[],
  definitions: Map<string, Definition[]>,
  timeZone: string,
): void {
  for (const event of events) parts.add(definitions.get(event.app_id) ?? [], rollupEventOf(event), timeZone);
}

/** What a drain added: each batch's creation time, and the organizations whose batches PostgreSQL could not read. */
export interface Drained {
  createdAt: string[];
  unreadable: string[];
}

/**
 * Adds up to `claim` waiting batches to the rollups and removes their outbox
 * rows, in one transaction, so that a batch counts exactly once (see
 * src/domain/rollups.ts). A job of the writer thread: on SQLite it writes
 * often, and with the ingest.
 */
export const drainRollupOutbox: WriteJob<{ dialect: Dialect; claim: number }, Drained> = async (trx, { dialect, claim }) => {
  const rows = await claimOutbox(trx, dialect, claim);
  const unreadable: string[] = [];
  const byOrg = new Map<string, typeof rows>();
  for (const row of rows) {
    const ofOrg = byOrg.get(row.orgId);
    if (ofOrg) ofOrg.push(row);
    else byOrg.set(row.orgId, [row]);
  }
  for (const [orgId, batches] of byOrg) {
    // Shared: batches of one organization are added by several instances at once, but not while a recompute starts or ends.
    const state = await stateFor(trx, orgId, { dialect, mode: 'share' });
    const generation = state.target_generation ?? state.generation;
    const timeZone = state.target_time_zone ?? state.time_zone;
    const definitions = definitionsByApp(await manifestsOfOrg(trx, orgId));
    const ids = batches.map((b) => b.id);
    const inDatabase = dialect === 'postgres' ? await addInDatabase(trx, { orgId, generation, ids }, definitions, timeZone) : 'not tried';
    if (inDatabase === 'unreadable') unreadable.push(orgId);
    if (inDatabase !== 'added') {
      const events = await eventsByIds(
        trx,
        batches.flatMap((b) => b.eventIds),
      );
      const parts = new PartsAccumulator();
      addStoredEvents(parts, events, definitions, timeZone);
      await addParts(trx, orgId, generation, parts.take());
    }
    if (state.target_generation === null) await deleteOutbox(trx, ids);
    else await markOutboxApplied(trx, ids, state.target_generation);
  }
  return { createdAt: rows.map((row) => row.createdAt), unreadable };
};

/**
 * PostgreSQL sums the batches' events itself, so that the service's thread,
 * busy with ingest, does not read and sum them. Otherwise the service must:
 * when their events span too many days to list, or their metadata is text
 * PostgreSQL cannot read (then nothing of the attempt is kept).
 */
async function addInDatabase(
  trx: Transaction<Database>,
  batches: OutboxBatches,
  definitions: Map<string, Definition[]>,
  timeZone: string,
): Promise<'added' | 'too many days' | 'unreadable'> {
  const span = await batchesSpan(trx, batches);
  if (!span) return 'added';
  if (Date.parse(span.last) - Date.parse(span.first) > MAX_BATCH_SPAN_MS) return 'too many days';
  try {
    await inSavepoint(trx, () => addBatchesInDatabase(trx, batches, definitions, daysSpanned(span.first, span.last, timeZone)));
    return 'added';
  } catch (err) {
    if (!isDataException(err)) throw err;
    return 'unreadable';
  }
}

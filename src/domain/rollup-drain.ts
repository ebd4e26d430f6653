import type { Dialect } from '../data/db';
import {
  addParts,
  claimOutbox,
  deleteOutbox,
  eventsByIds,
  manifestsOfOrg,
  markOutboxApplied,
  stateFor,
  type Definition,
  type StoredEvent,
} from '../data/rollups';
import type { WriteJob } from '../data/writer';
import { PartsAccumulator, type RollupEvent } from './rollup-rules';

export function rollupEventOf(event: StoredEvent): RollupEvent {
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

/**
 * Adds up to `claim` waiting batches to the rollups and removes their outbox
 * rows, in one transaction, so that a batch counts exactly once (see
 * src/domain/rollups.ts); resolves with each batch's creation time. A job of
 * the writer thread: on SQLite it writes often, and with the ingest.
 */
export const drainRollupOutbox: WriteJob<{ dialect: Dialect; claim: number }, string[]> = async (trx, { dialect, claim }) => {
  const rows = await claimOutbox(trx, dialect, claim);
  const byOrg = new Map<string, typeof rows>();
  for (const row of rows) byOrg.set(row.org_id, [...(byOrg.get(row.org_id) ?? []), row]);
  for (const [orgId, batches] of byOrg) {
    // Shared: batches of one organization are added by several instances at once, but not while a recompute starts or ends.
    const state = await stateFor(trx, orgId, { dialect, mode: 'share' });
    const generation = state.target_generation ?? state.generation;
    const timeZone = state.target_time_zone ?? state.time_zone;
    const definitions = definitionsByApp(await manifestsOfOrg(trx, orgId));
    const parts = new PartsAccumulator();
    for (const event of await eventsByIds(
      trx,
      batches.flatMap((b) => JSON.parse(b.event_ids) as string[]),
    )) {
      parts.add(definitions.get(event.app_id) ?? [], rollupEventOf(event), timeZone);
    }
    await addParts(trx, dialect, orgId, generation, parts.take());
    const ids = batches.map((b) => b.id);
    if (state.target_generation === null) await deleteOutbox(trx, ids);
    else await markOutboxApplied(trx, ids, state.target_generation);
  }
  return rows.map((row) => row.created_at);
};

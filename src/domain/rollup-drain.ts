import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Transaction } from 'kysely';
import { isDataException } from '../data/db';
import { timeZoneOf } from '../data/organizations';
import {
  addBatchesInDatabase,
  addParts,
  claimOutbox,
  deleteOutbox,
  eventsOfBatches,
  manifestsOfOrg,
  markOutboxApplied,
  readState,
  stateFor,
  waitingOutbox,
  type Definition,
  type OutboxBatch,
  type OutboxBatches,
  spanOf,
  type StoredEvent,
  type TimeSpan,
} from '../data/rollups';
import type { Database, Executor, RollupStateTable } from '../data/schema';
import { inSavepoint } from '../data/transaction';
import type { WriteJob } from '../data/writer';
import { daysSpanned } from './local-day';
import { packCells, PartsAccumulator, unpackCells, type PackedCells, type RollupEvent } from './rollup-rules';

// Adding committed batches to the rollups (see src/domain/rollups.ts), so that each counts exactly once.
// PostgreSQL: instances claim batches with FOR UPDATE SKIP LOCKED and the database sums them, in one
// transaction. SQLite: the writer thread that stores every batch is the bottleneck of ingest, so the
// HTTP thread reads and sums the waiting batches on its own connection (a read, beside the writer in
// WAL mode), and the writer only adds the sums and removes the batches, after checking that nothing
// they depend on changed meanwhile.

// Batches whose events span more (a backfill, say) are summed by the service: the days PostgreSQL is given stay few.
const MAX_BATCH_SPAN_MS = 31 * 86_400_000;
// Events the service sums between two turns of the thread's other work (each pause lets a round of requests
// through, so fewer, larger steps finish a drain sooner); batches it reads back, it reads this many at a time.
const EVENTS_PER_TURN = 2_000;
const BATCHES_PER_READ = 20;

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

/** Whether any app has a statistic: without one a batch adds nothing, and its events need not be read. */
function definesAny(definitions: Map<string, Definition[]>): boolean {
  return [...definitions.values()].some((ofApp) => ofApp.length > 0);
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

/** Adds the parts of the events of the batches `ids`, read a few batches at a time with the thread's other work in between. */
async function sumBatches(
  db: Executor,
  ids: string[],
  definitions: Map<string, Definition[]>,
  timeZone: string,
  parts = new PartsAccumulator(),
): Promise<PartsAccumulator> {
  for (let i = 0; i < ids.length; i += BATCHES_PER_READ) {
    if (i > 0) await nextTurn();
    addStoredEvents(parts, await eventsOfBatches(db, ids.slice(i, i + BATCHES_PER_READ)), definitions, timeZone);
  }
  return parts;
}

function byOrganization(rows: OutboxBatch[]): Map<string, OutboxBatch[]> {
  const byOrg = new Map<string, OutboxBatch[]>();
  for (const row of rows) {
    const ofOrg = byOrg.get(row.orgId);
    if (ofOrg) ofOrg.push(row);
    else byOrg.set(row.orgId, [row]);
  }
  return byOrg;
}

/** Added batches leave the outbox; while a recompute runs they stay, marked, so that its scan leaves their events out. */
async function settleOutbox(trx: Executor, state: RollupStateTable, ids: string[]): Promise<void> {
  if (state.target_generation === null) await deleteOutbox(trx, ids);
  else await markOutboxApplied(trx, ids, state.target_generation);
}

/** What a drain did: each added batch's creation time, the batches left for the next, and the organizations whose batches PostgreSQL could not read. */
export interface Drained {
  createdAt: string[];
  left: number;
  unreadable: string[];
}

/**
 * PostgreSQL: adds up to `claim` waiting batches to the rollups and removes
 * their outbox rows, in one transaction. The database sums them unless it
 * cannot (see addInDatabase); then the service does.
 */
export const drainRollupOutbox: WriteJob<{ claim: number }, Drained> = async (trx, { claim }) => {
  const rows = await claimOutbox(trx, 'postgres', claim);
  const unreadable: string[] = [];
  for (const [orgId, batches] of byOrganization(rows)) {
    // Shared: batches of one organization are added by several instances at once, but not while a recompute starts or ends.
    const state = await stateFor(trx, orgId, { dialect: 'postgres', mode: 'share' });
    const generation = state.target_generation ?? state.generation;
    const timeZone = state.target_time_zone ?? state.time_zone;
    const definitions = definitionsByApp(await manifestsOfOrg(trx, orgId));
    const ids = batches.map((b) => b.id);
    if (definesAny(definitions)) {
      const inDatabase = await addInDatabase(
        trx,
        { orgId, generation, ids },
        spanOf(batches.flatMap(({ span }) => (span ? [span.first, span.last] : []))),
        definitions,
        timeZone,
      );
      if (inDatabase === 'unreadable') unreadable.push(orgId);
      if (inDatabase !== 'added') {
        const parts = await sumBatches(trx, ids, definitions, timeZone);
        await addParts(trx, orgId, generation, parts.take());
      }
    }
    await settleOutbox(trx, state, ids);
  }
  return { createdAt: rows.map((row) => row.createdAt), left: 0, unreadable };
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
  span: TimeSpan | undefined,
  definitions: Map<string, Definition[]>,
  timeZone: string,
): Promise<'added' | 'too many days' | 'unreadable'> {
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

/** An event as the rollups take it: by its app's manifest, what the rules read of it. */
export interface AppEvent {
  appId: string;
  event: RollupEvent;
}

/**
 * SQLite: the events of the batches this process committed, kept from their
 * request until a drain has taken them, so that the HTTP thread sums them
 * without reading them back and parsing their metadata again. Bounded: past
 * `limit` batches the oldest are dropped, and the drain reads those from the
 * database, as it reads the batches other processes committed.
 */
export class CommittedEvents {
  private readonly batches = new Map<string, AppEvent[]>();

  constructor(private readonly limit: number) {}

  remember(batchId: string, events: AppEvent[]): void {
    this.batches.set(batchId, events);
    if (this.batches.size <= this.limit) return;
    const [oldest] = this.batches.keys();
    if (oldest !== undefined) this.batches.delete(oldest);
  }

  of(batchId: string): AppEvent[] | undefined {
    return this.batches.get(batchId);
  }

  forget(batchIds: string[]): void {
    for (const id of batchIds) this.batches.delete(id);
  }
}

/**
 * Adds to `parts` the events `committed` kept of `batches`, a few thousand at
 * a time with the thread's other work in between, as sumBatches does (a
 * drain's 60,000 events at once would hold requests up); answers the ids of
 * the batches it did not keep, whose events are to be read.
 */
async function addKeptEvents(
  parts: PartsAccumulator,
  batches: OutboxBatch[],
  committed: CommittedEvents | undefined,
  definitions: Map<string, Definition[]>,
  timeZone: string,
): Promise<string[]> {
  const unread: string[] = [];
  let added = 0;
  for (const batch of batches) {
    const kept = committed?.of(batch.id);
    if (!kept) {
      unread.push(batch.id);
      continue;
    }
    if (added >= EVENTS_PER_TURN) {
      await nextTurn();
      added = 0;
    }
    for (const { appId, event } of kept) parts.add(definitions.get(appId) ?? [], event, timeZone);
    added += kept.length;
  }
  return unread;
}

/** An organization's waiting batches summed by the service, with the state they were summed under. */
export interface SummedBatches {
  orgId: string;
  /** The generation answering and the one under recompute when they were read: a new manifest or zone changes one of them. */
  generation: number;
  target: number | null;
  batches: { id: string; createdAt: string }[];
  cells: PackedCells;
}

/**
 * SQLite, on the HTTP thread's connection: reads up to `claim` waiting
 * batches and sums their events for the generation that takes them. Nothing
 * is written (stateFor would: a missing state is the one it creates).
 */
export async function sumWaitingBatches(db: Executor, claim: number, committed?: CommittedEvents): Promise<SummedBatches[]> {
  const summed: SummedBatches[] = [];
  for (const [orgId, batches] of byOrganization(await claimOutbox(db, 'sqlite', claim))) {
    const state = await readState(db, orgId);
    const timeZone = state ? (state.target_time_zone ?? state.time_zone) : ((await timeZoneOf(db, orgId)) ?? 'UTC');
    const definitions = definitionsByApp(await manifestsOfOrg(db, orgId));
    const parts = new PartsAccumulator();
    if (definesAny(definitions)) {
      const unread = await addKeptEvents(parts, batches, committed, definitions, timeZone);
      await sumBatches(db, unread, definitions, timeZone, parts);
    }
    summed.push({
      orgId,
      generation: state?.generation ?? 1,
      target: state?.target_generation ?? null,
      batches: batches.map(({ id, createdAt }) => ({ id, createdAt })),
      cells: packCells(parts.take()),
    });
  }
  return summed;
}

/**
 * SQLite, a job of the writer thread: adds what sumWaitingBatches summed and
 * removes those batches, in one transaction. An organization whose state
 * changed since (a new manifest or zone: its sums are of the wrong
 * generation) or whose batches another process added meanwhile is left
 * untouched, for the next drain to read again.
 */
export const addSummedBatches: WriteJob<SummedBatches[], Drained> = async (trx, summed) => {
  const drained: Drained = { createdAt: [], left: 0, unreadable: [] };
  for (const { orgId, generation, target, batches, cells } of summed) {
    const state = await stateFor(trx, orgId);
    const ids = batches.map((b) => b.id);
    if (state.generation !== generation || state.target_generation !== target || (await waitingOutbox(trx, ids)) !== ids.length) {
      drained.left += ids.length;
      continue;
    }
    await addParts(trx, orgId, target ?? generation, unpackCells(cells));
    await settleOutbox(trx, state, ids);
    drained.createdAt.push(...batches.map((b) => b.createdAt));
  }
  return drained;
};

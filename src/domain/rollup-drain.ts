import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Transaction } from 'kysely';
import { isDataException, type Dialect } from '../data/db';
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
  type OutboxChoice,
  type PackedCells,
  spanOf,
  type StoredEvent,
  type TimeSpan,
} from '../data/rollups';
import type { Database, Executor, RollupStateTable } from '../data/schema';
import { inSavepoint } from '../data/transaction';
import type { WriteJob } from '../data/writer';
import { daysSpanned } from './local-day';
import { PartsAccumulator, type RollupEvent } from './rollup-rules';
import { instantOf } from './utc-timestamp';

// Adding committed batches to the rollups (see src/domain/rollups.ts), so that each counts exactly once.
// The batches this process committed are summed as they commit (CommittedSums), and a drain adds the
// sums in one transaction that takes their batches, after checking that nothing they depend on changed
// meanwhile (addSummedBatches); on SQLite that transaction runs in the writer thread that stores every
// batch. Batches nobody summed (of another process, of before a restart, or whose sums were refused) are
// read back: on PostgreSQL instances claim them with FOR UPDATE SKIP LOCKED and the database sums them in
// the claiming transaction; on SQLite the HTTP thread reads and sums them on its own connection (a read,
// beside the writer in WAL mode) and the writer adds the sums as it adds the others.

// Batches whose events span more (a backfill, say) are summed by the service: the days PostgreSQL is given stay few.
const MAX_BATCH_SPAN_MS = 31 * 86_400_000;
// Batches the service reads back, it reads this many at a time, with a turn of the thread's other work between.
const BATCHES_PER_READ = 20;

function rollupEventOf(event: StoredEvent): RollupEvent {
  return {
    workerId: event.worker_id,
    instant: instantOf(event.ts),
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

/** What a drain did: the batches added (and when each was committed), the batches left to read back, and the organizations whose batches PostgreSQL could not read. */
export interface Drained {
  added: { id: string; createdAt: string }[];
  left: string[];
  unreadable: string[];
}

/**
 * PostgreSQL: adds up to `claim` waiting batches to the rollups and removes
 * their outbox rows, in one transaction. The database sums them unless it
 * cannot (see addInDatabase); then the service does.
 */
export const drainRollupOutbox: WriteJob<{ claim: number; only?: OutboxChoice }, Drained> = async (trx, { claim, only }) => {
  const rows = await claimOutbox(trx, 'postgres', claim, only);
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
  return { added: rows.map(({ id, createdAt }) => ({ id, createdAt })), left: [], unreadable };
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

/** A batch this process committed: its events are built only if its app has statistics to sum them for. */
export interface BatchEvents {
  orgId: string;
  appId: string;
  batchId: string;
  events: () => RollupEvent[];
}

/** What an organization's events are summed by: a new manifest or zone changes the generation or the target. */
export interface SumRules {
  generation: number;
  target: number | null;
  timeZone: string;
  definitions: Map<string, Definition[]>;
}

/**
 * The rules the organization's batches are summed by now, read without a
 * lock: addSummedBatches adds the sums only if the generation and target are
 * still these. The state is read first, so a manifest or zone that changes
 * after it changes them.
 */
export async function sumRulesOf(db: Executor, orgId: string): Promise<SumRules> {
  const state = await readState(db, orgId);
  const timeZone = state ? (state.target_time_zone ?? state.time_zone) : ((await timeZoneOf(db, orgId)) ?? 'UTC');
  const definitions = definitionsByApp(await manifestsOfOrg(db, orgId));
  return { generation: state?.generation ?? 1, target: state?.target_generation ?? null, timeZone, definitions };
}

/** An organization's committed batches, summed by `rules`. */
interface Summing {
  rules: SumRules;
  parts: PartsAccumulator;
  batches: { id: string; createdAt: string }[];
  /** When it last committed a batch (ms): its rules are read again at each drain until it has been quiet a while. */
  lastAt: number;
}

// An organization that committed nothing for this long is forgotten: its next batch is read back, and its rules read again.
const RULES_KEPT_MS = 60_000;

/**
 * The batches this process committed, summed as each commits by the rules
 * the last drain read, so that a drain only adds the sums: no event is kept
 * or read back, and the database does no summing (on PostgreSQL the
 * matching and grouping of every event was most of what the rollups cost
 * it). A batch of an organization whose rules were not read yet, or past
 * `limit` batches a drain, is read back by id; past a hundred times that
 * (the drains stopped), it is left for the drains of batches nobody summed.
 */
export class CommittedSums {
  private readonly summing = new Map<string, Summing>();
  /** Batches to read back by id, and the organizations whose rules to read. */
  private unsummed: string[] = [];
  private readonly unruled = new Set<string>();
  private size = 0;

  constructor(private readonly limit: number) {}

  add({ orgId, appId, batchId, events }: BatchEvents): void {
    const summing = this.summing.get(orgId);
    if (!summing || this.size >= this.limit) {
      if (this.unsummed.length < 100 * this.limit) this.unsummed.push(batchId);
      if (!summing) this.unruled.add(orgId);
      return;
    }
    this.size += 1;
    const definitions = summing.rules.definitions.get(appId) ?? [];
    if (definitions.length > 0) for (const event of events()) summing.parts.add(definitions, event, summing.rules.timeZone);
    summing.batches.push({ id: batchId, createdAt: new Date().toISOString() });
    summing.lastAt = Date.now();
  }

  /** Batches whose sums were not added (their rules changed, or another drain took one of them): read them back. */
  readBack(batchIds: string[]): void {
    this.unsummed.push(...batchIds);
  }

  /** The organizations whose rules the next take wants: those that committed batches lately. */
  organizations(): string[] {
    const quietSince = Date.now() - RULES_KEPT_MS;
    const active = [...this.summing].filter(([, s]) => s.batches.length > 0 || s.lastAt > quietSince).map(([orgId]) => orgId);
    return [...new Set([...active, ...this.unruled])];
  }

  /**
   * Takes the sums and the batches to read back; batches committed from now
   * on are summed by `rules`, read since the organizations() were asked.
   */
  take(rules: Map<string, SumRules>): { summed: SummedBatches[]; unsummed: string[] } {
    const summed: SummedBatches[] = [];
    const lastAt = new Map<string, number>();
    for (const [orgId, { rules: by, parts, batches, lastAt: at }] of this.summing) {
      if (batches.length > 0) summed.push({ orgId, generation: by.generation, target: by.target, batches, cells: parts.take() });
      lastAt.set(orgId, at);
    }
    const unsummed = this.unsummed;
    this.summing.clear();
    this.unsummed = [];
    this.unruled.clear();
    this.size = 0;
    for (const [orgId, by] of rules) {
      this.summing.set(orgId, { rules: by, parts: new PartsAccumulator(), batches: [], lastAt: lastAt.get(orgId) ?? Date.now() });
    }
    return { summed, unsummed };
  }
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
 * batches (those `only` chooses), reads back their events and sums them for
 * the generation that takes them. Nothing is written (stateFor would: a
 * missing state is the one it creates).
 */
export async function sumWaitingBatches(db: Executor, claim: number, only?: OutboxChoice): Promise<SummedBatches[]> {
  const summed: SummedBatches[] = [];
  for (const [orgId, batches] of byOrganization(await claimOutbox(db, 'sqlite', claim, only))) {
    const rules = await sumRulesOf(db, orgId);
    const parts = definesAny(rules.definitions)
      ? await sumBatches(
          db,
          batches.map((b) => b.id),
          rules.definitions,
          rules.timeZone,
        )
      : new PartsAccumulator();
    summed.push({
      orgId,
      generation: rules.generation,
      target: rules.target,
      batches: batches.map(({ id, createdAt }) => ({ id, createdAt })),
      cells: parts.take(),
    });
  }
  return summed;
}

/** Sums to add, as sumWaitingBatches or CommittedSums made them. */
export interface SumsToAdd {
  dialect: Dialect;
  summed: SummedBatches[];
}

/**
 * Adds sums made in the service and removes their batches, in one
 * transaction (on SQLite a job of the writer thread). An organization whose
 * state changed since (a new manifest or zone: its sums are of the wrong
 * generation) or one of whose batches another drain took is left untouched:
 * its batches are to be read back (`left`). On PostgreSQL the state is held
 * shared and the batches locked, so neither changes before the commit.
 */
export const addSummedBatches: WriteJob<SumsToAdd, Drained> = async (trx, { dialect, summed }) => {
  const drained: Drained = { added: [], left: [], unreadable: [] };
  for (const { orgId, generation, target, batches, cells } of summed) {
    const state = await stateFor(trx, orgId, { dialect, mode: 'share' });
    const ids = batches.map((b) => b.id);
    if (state.generation !== generation || state.target_generation !== target || (await waitingOutbox(trx, dialect, ids)) !== ids.length) {
      drained.left.push(...ids);
      continue;
    }
    await addParts(trx, orgId, target ?? generation, cells);
    await settleOutbox(trx, state, ids);
    drained.added.push(...batches);
  }
  return drained;
};

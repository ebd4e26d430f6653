import type { Dialect } from '../data/db';
import {
  addParts,
  firstEventAfter,
  manifestsOfOrg,
  readChunk,
  readState,
  stateFor,
  updateState,
  type Chunk,
  type EventKey,
  type PackedCells,
} from '../data/rollups';
import type { Executor, RollupStateTable } from '../data/schema';
import type { WriteJob } from '../data/writer';
import { addStoredEvents, definitionsByApp } from './rollup-drain';
import { PartsAccumulator } from './rollup-rules';
import { LAST_INSTANT } from './utc-timestamp';

// A recompute's chunk summed by the service (on SQLite; on PostgreSQL when the database cannot read it) is read and
// summed without a lock on the thread that serves requests, and its sums added by the writer (on SQLite its thread),
// so that the upserts no longer hold the requests' thread (measured: during SQLite's recompute in make bench the HTTP
// thread spent 12% of its time upserting a chunk's cells while the writer idled 87%). The sums hold only if the
// recompute is where they were read, which the writer checks (addRecomputedChunk). Meanwhile a batch that commits
// waits in the outbox: the chunk's read leaves its events out, the drains add it (every event has its batch).

// A chunk ends within this span of its first event: the days PostgreSQL is given for it stay few.
const CHUNK_SPAN_MS = 8 * 86_400_000;

/** The scan's position: the last event a chunk read, or undefined before the first chunk. */
function scanPosition(state: RollupStateTable): EventKey | undefined {
  return state.scan_ts !== null && state.scan_id !== null ? { ts: state.scan_ts, id: state.scan_id } : undefined;
}

/** The recompute `owner` leads: its target generation and zone and where its scan is, if one is open and `owner` holds its lease. */
export function recomputeLedBy(
  state: RollupStateTable | undefined,
  owner: string,
): { generation: number; timeZone: string; after: EventKey | undefined } | undefined {
  if (!state || state.target_generation === null || state.target_time_zone === null || state.lease_owner !== owner) return undefined;
  return { generation: state.target_generation, timeZone: state.target_time_zone, after: scanPosition(state) };
}

/** Moves the scan past a chunk's last event, renewing the lease. */
export async function advanceScan(db: Executor, orgId: string, last: EventKey, leaseUntil: string): Promise<void> {
  await updateState(db, orgId, { scan_ts: last.ts, scan_id: last.id, lease_until: leaseUntil });
}

/** The next chunk of the recompute into `generation`: up to `size` events from `first` on, within CHUNK_SPAN_MS of it. */
export function chunkFrom(orgId: string, generation: number, after: EventKey | undefined, first: EventKey, size: number): Chunk {
  return { orgId, generation, after, through: new Date(Math.min(Date.parse(first.ts) + CHUNK_SPAN_MS, LAST_INSTANT)).toISOString(), size };
}

/** A chunk's sums, with where the recompute was when it was read and where the chunk ends. */
export interface RecomputedChunk {
  dialect: Dialect;
  orgId: string;
  owner: string;
  generation: number;
  after: EventKey | undefined;
  last: EventKey;
  leaseUntil: string;
  cells: PackedCells;
  /** Events read that count. */
  counted: number;
}

/**
 * Reads and sums the next chunk of the organization's recompute, whose
 * lease `lease.owner` holds (until `lease.until`): 'done' when no event is
 * left after the scan's position, 'lost' when the recompute is no longer
 * the owner's or was replaced (or the chunk's events went meanwhile).
 */
export async function sumNextChunk(
  db: Executor,
  dialect: Dialect,
  orgId: string,
  lease: { owner: string; until: string },
  size: number,
): Promise<RecomputedChunk | 'done' | 'lost'> {
  const target = recomputeLedBy(await readState(db, orgId), lease.owner);
  if (!target) return 'lost';
  const { after } = target;
  const first = await firstEventAfter(db, orgId, after);
  if (!first) return 'done';
  const definitions = definitionsByApp(await manifestsOfOrg(db, orgId));
  const read = await readChunk(db, chunkFrom(orgId, target.generation, after, first, size));
  if (!read.last) return 'lost';
  const parts = new PartsAccumulator();
  addStoredEvents(parts, read.events, definitions, target.timeZone);
  return {
    dialect,
    orgId,
    owner: lease.owner,
    generation: target.generation,
    after,
    last: read.last,
    leaseUntil: lease.until,
    cells: parts.take(),
    counted: read.events.length,
  };
}

const sameKey = (a: EventKey | undefined, b: EventKey | undefined) => a?.ts === b?.ts && a?.id === b?.id;

/**
 * Adds a chunk's sums and moves the scan past it, in one transaction (on
 * SQLite a job of the writer thread), if the recompute is still the one the
 * chunk was read for, owner's, and where it was: false, with nothing
 * written, when not (another chunk was added meanwhile, the lease was taken
 * over, a new manifest or zone replaced the recompute).
 */
export const addRecomputedChunk: WriteJob<RecomputedChunk, boolean> = async (trx, chunk) => {
  const target = recomputeLedBy(await stateFor(trx, chunk.orgId, { dialect: chunk.dialect, mode: 'update' }), chunk.owner);
  if (target?.generation !== chunk.generation || !sameKey(target.after, chunk.after)) return false;
  await addParts(trx, chunk.orgId, chunk.generation, chunk.cells);
  await advanceScan(trx, chunk.orgId, chunk.last, chunk.leaseUntil);
  return true;
};

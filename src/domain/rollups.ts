import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../data/db';
import {
  addParts,
  deleteCells,
  manifestsOfOrg,
  readState,
  recomputesOpen,
  scanEvents,
  staleCells,
  stateFor,
  takeLease,
  updateState,
} from '../data/rollups';
import type { Executor } from '../data/schema';
import { metrics } from '../metrics';
import { definitionsByApp, rollupEventOf } from './rollup-drain';
import { PartsAccumulator } from './rollup-rules';
import { runWrite } from './writes';

// The rollups are caught up from committed batches by a background worker:
// ingest writes one outbox row per batch in its own transaction (one small
// insert: ingest keeps its speed), and the worker adds a batch's parts and
// removes its row in one transaction, so a batch counts exactly once. A
// replaced manifest or a new time zone starts a new generation, computed from
// the stored events in chunks while the previous one answers, whole.

/**
 * Inside the transaction that replaces a manifest or changes the time zone:
 * everything past counts anew, in a new generation, from the stored events.
 * The generation that answers stops taking batches (its answer stays whole,
 * of one manifest and one zone) until the new one replaces it.
 */
export async function startRecompute(trx: Executor, orgId: string, timeZone: string): Promise<void> {
  const existed = (await readState(trx, orgId)) !== undefined;
  const answering = existed ? (await manifestsOfOrg(trx, orgId)).flatMap((m) => m.definitions.map((d) => d.id)) : [];
  // The update below locks the row: batches being added finish first (they hold it shared).
  await stateFor(trx, orgId);
  const now = new Date().toISOString();
  await trx
    .updateTable('rollup_state')
    .set((eb) => ({
      target_generation: eb(eb.fn.coalesce('target_generation', 'generation'), '+', 1),
      target_time_zone: timeZone,
      frozen_at: eb.fn.coalesce('frozen_at', eb.val(now)),
      frozen_statistics: eb.fn.coalesce('frozen_statistics', eb.val(JSON.stringify(answering))),
      scan_ts: null,
      scan_id: null,
    }))
    .where('org_id', '=', orgId)
    .execute();
}

export interface RollupWorkerOptions {
  /** How long a recompute's lease lasts without renewal: a killed instance's share is taken over after it. */
  leaseMs?: number;
  /** Events per recompute chunk (one transaction). */
  chunk?: number;
  /** Between two looks when nothing woke the worker. */
  pollMs?: number;
  /** Outbox rows (batches) added per transaction. */
  claim?: number;
  /** After adding the last waiting batches, the wait before adding more: batches committed meanwhile go together. */
  coalesceMs?: number;
  /** After a recompute chunk that took t, rest t × this. */
  restFactor?: number;
  logger?: Logger;
}

/** Keeps the rollups: adds committed batches, runs recomputes, deletes replaced generations. */
export class RollupWorker {
  readonly owner = `rollups-${randomBytes(6).toString('base64url')}`;
  private readonly leaseMs: number;
  private readonly chunk: number;
  private readonly pollMs: number;
  private readonly claim: number;
  private readonly coalesceMs: number;
  private readonly restFactor: number;
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private stop: (() => void) | undefined;
  private woken = false;

  constructor(
    private readonly db: Db,
    private readonly options: RollupWorkerOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.chunk = options.chunk ?? 2_000;
    this.pollMs = options.pollMs ?? 1_000;
    this.claim = options.claim ?? 200;
    this.coalesceMs = options.coalesceMs ?? 1_000;
    this.restFactor = options.restFactor ?? 1;
  }

  /** Runs in the background until close(). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /** A batch was committed: look now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.stop?.();
    await this.loop;
  }

  /** Until nothing is left to do: every committed batch added, every open recompute done (tests, verify). */
  async catchUp(): Promise<void> {
    for (;;) {
      while ((await this.drainOnce()) > 0);
      if (!(await this.recomputeOnce())) return;
    }
  }

  private async run(): Promise<void> {
    let nextDrainAt = 0;
    while (!this.stopped) {
      try {
        let drained = false;
        const added = performance.now() >= nextDrainAt ? await this.drainOnce() : 0;
        if (added > 0) {
          drained = true;
          // A full claim leaves more waiting: no pause then, or a steady ingest faster than a claim a
          // pause would outrun the rollups (measured: 29,000 events/s against 200 batches of 100 a second).
          nextDrainAt = added < this.claim ? performance.now() + this.coalesceMs : 0;
        }
        const started = performance.now();
        if (await this.recomputeOnce()) {
          // A recompute takes at most 1 / (1 + restFactor) of the time: ingest goes on meanwhile.
          await this.sleep((performance.now() - started) * this.restFactor, false);
          continue;
        }
        if (drained) {
          // Batches committed meanwhile are added together: fewer, larger upserts.
          await this.sleep(nextDrainAt - performance.now(), false);
          continue;
        }
      } catch (err) {
        this.options.logger?.warn({ err }, 'rollups: a step failed; it is tried again');
      }
      if (this.woken) {
        this.woken = false;
        continue;
      }
      await this.sleep(this.pollMs, true);
    }
  }

  /** Waits `ms`; a commit (wake) ends the wait early when `wakeable`; close() always does. */
  private async sleep(ms: number, wakeable: boolean): Promise<void> {
    if (ms <= 0 || this.stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      const end = () => {
        clearTimeout(timer);
        resolve();
      };
      this.stop = end;
      if (wakeable) this.wakeUp = end;
    });
    this.stop = undefined;
    this.wakeUp = undefined;
    if (wakeable) this.woken = false;
  }

  /** Adds a few waiting batches to the rollups (in the writer thread, when the database has one); resolves with how many. */
  async drainOnce(): Promise<number> {
    const added = await runWrite(this.db, 'drainRollupOutbox', { dialect: this.db.dialect, claim: this.claim });
    const now = Date.now();
    for (const createdAt of added) metrics.rollupDelay.observe((now - Date.parse(createdAt)) / 1000);
    return added.length;
  }

  /** One chunk of one open recompute whose lease this worker holds or can take; false when there was none. */
  async recomputeOnce(): Promise<boolean> {
    const now = new Date();
    for (const orgId of await recomputesOpen(this.db.kysely, this.owner, now.toISOString())) {
      const until = new Date(now.getTime() + this.leaseMs).toISOString();
      if (!(await takeLease(this.db.kysely, orgId, this.owner, now.toISOString(), until))) continue;
      const finished = await this.recomputeChunk(orgId, until);
      if (finished) await this.deleteReplaced(orgId);
      return true;
    }
    return false;
  }

  /** Adds the next chunk of events to the generation under recompute; true when it then replaced the answering one. */
  private async recomputeChunk(orgId: string, leaseUntil: string): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const state = await stateFor(trx, orgId, { dialect: this.db.dialect, mode: 'update' });
      const target = state.target_generation;
      const timeZone = state.target_time_zone;
      if (target === null || timeZone === null || state.lease_owner !== this.owner) return false;
      const after = state.scan_ts !== null && state.scan_id !== null ? { ts: state.scan_ts, id: state.scan_id } : undefined;
      const events = await scanEvents(trx, orgId, after, target, this.chunk);
      const definitions = definitionsByApp(await manifestsOfOrg(trx, orgId));
      const parts = new PartsAccumulator();
      for (const event of events) parts.add(definitions.get(event.app_id) ?? [], rollupEventOf(event), timeZone);
      await addParts(trx, this.db.dialect, orgId, target, parts.take());
      metrics.rollupRecomputed.inc(events.length);
      const last = events.at(-1);
      if (last && events.length === this.chunk) {
        await updateState(trx, orgId, { scan_ts: last.ts, scan_id: last.id, lease_until: leaseUntil });
        return false;
      }
      await updateState(trx, orgId, {
        generation: target,
        time_zone: timeZone,
        frozen_at: null,
        frozen_statistics: null,
        target_generation: null,
        target_time_zone: null,
        scan_ts: null,
        scan_id: null,
        lease_owner: null,
        lease_until: null,
      });
      // Batches kept for the scan are in the new generation now.
      await trx.deleteFrom('rollup_outbox').where('org_id', '=', orgId).where('applied_generation', 'is not', null).execute();
      return true;
    });
  }

  /** Deletes the rows of generations that no longer answer, a few days' cells per transaction. */
  private async deleteReplaced(orgId: string): Promise<void> {
    for (;;) {
      const state = await readState(this.db.kysely, orgId);
      if (!state) return;
      const keep = [state.generation, ...(state.target_generation === null ? [] : [state.target_generation])];
      const cells = await staleCells(this.db.kysely, orgId, keep, 50);
      if (cells.length === 0) return;
      await this.db.transaction((trx) => deleteCells(trx, orgId, cells));
    }
  }
}

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { isDataException, type Db } from '../data/db';
import {
  addChunkInDatabase,
  beginGeneration,
  deleteAppliedOutbox,
  deleteCells,
  firstEventAfter,
  listDay,
  manifestsOfOrg,
  readState,
  recomputesOpen,
  rollupOrganizationsAfter,
  staleCells,
  stateFor,
  takeLease,
  unlistedDays,
  updateState,
  type OutboxChoice,
} from '../data/rollups';
import type { Executor } from '../data/schema';
import { metrics } from '../metrics';
import { daysSpanned } from './local-day';
import {
  CommittedSums,
  definitionsByApp,
  sumRulesOf,
  sumWaitingBatches,
  type BatchEvents,
  type Drained,
  type SumRules,
} from './rollup-drain';
import { advanceScan, chunkFrom, recomputeLedBy, sumNextChunk } from './rollup-recompute';
import { partsOfAggregation, type Aggregation } from './rollup-rules';
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
  await beginGeneration(trx, orgId, timeZone, answering, new Date().toISOString());
}

// Days are listed (src/data/migrations/008_day_lists.ts) once they ended in every zone: rows rarely come to them then.
const LIST_AFTER_MS = 2 * 86_400_000;

/** The first day not yet closed: the days before it are listed. */
export function closedBefore(): string {
  return new Date(Date.now() - LIST_AFTER_MS).toISOString().slice(0, 10);
}
// A look takes the next few organizations (round and round, in id order) and lists up to a step of their days, each
// in its own short transaction; a look that ended a round finding none, or came between drains, waits this long
// before the next. While ingest goes on, a look costs a few organizations' day counts, however many there are.
const LISTS_PER_STEP = 20;
const LIST_LOOK_EVERY_MS = 10_000;
const ALL_PARTS = ['count', 'sum', 'numerator', 'denominator'] as const;

export interface RollupWorkerOptions {
  /** How long a recompute's lease lasts without renewal: a killed instance's share is taken over after it. */
  leaseMs?: number;
  /** Events read per recompute chunk (one transaction); by default 50,000 on PostgreSQL, which sums them itself, 2,000 on SQLite. */
  chunk?: number;
  /** Between two looks when nothing woke the worker. */
  pollMs?: number;
  /** Outbox rows (batches) added per transaction; by default 400 on PostgreSQL, 600 on SQLite. */
  claim?: number;
  /** Organizations a look for closed days to list takes (in turn, in id order); by default 20. */
  listOrganizations?: number;
  /** After a drain that added the last waiting batches, how long from its start until the next: batches committed meanwhile go together; by default 3,000. */
  coalesceMs?: number;
  /**
   * Batches nobody summed as they committed (another process's, or of before a restart) are read back once they
   * waited this long; by default 5,000. Younger ones are left to the process that committed them, which adds its sums.
   */
  handOverMs?: number;
  /** After a recompute chunk that took t, rest t × this; by default 1 on PostgreSQL, 1.5 on SQLite. */
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
  private readonly listOrganizations: number;
  private readonly coalesceMs: number;
  private readonly handOverMs: number;
  private readonly restFactor: number;
  private stopped = true;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private stop: (() => void) | undefined;
  private woken = false;
  private readonly sums: CommittedSums;
  /** The last drain's claim of batches to read back was full: more wait. */
  private backlog = false;
  private nextListLookAt = 0;
  /** The last organization the looks for days to list took: the next look begins after it. */
  private listedAfter = '';
  /** Days listed since the round of looks began: a round that lists none leaves the lists settled. */
  private listedThisRound = 0;

  constructor(
    private readonly db: Db,
    private readonly options: RollupWorkerOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.chunk = options.chunk ?? (db.dialect === 'postgres' ? 50_000 : 2_000);
    this.pollMs = options.pollMs ?? 1_000;
    // The claim bounds a drain of batches read back (those nobody summed as they committed: another process's, or
    // a backlog's). Measured when every batch was read back: on PostgreSQL a larger claim adds each (worker, day) cell
    // once for more events (PostgreSQL CPU per 1,000 events 10.7-17.9 ms with 200, 7.3-14.6 with 1,000), but makes
    // batches wait longer (make bench: delay p99 up to 10 s with 1,000; up to 5 s with 400). On SQLite the HTTP
    // thread sums them between requests: with 200 the drains fell behind make bench's ingest; with 600 the delay
    // stayed within 2 s.
    this.claim = options.claim ?? (db.dialect === 'postgres' ? 400 : 600);
    // A few claims' worth: past that (the drains fell behind), batches are read back. Six claims hold a pause's
    // batches (coalesceMs, below) at up to 800 batches a second on PostgreSQL, 3,600 on SQLite.
    this.sums = new CommittedSums(6 * this.claim);
    this.listOrganizations = options.listOrganizations ?? 20;
    // A drain adds each (worker, day) cell its batches touched once, however many events fell on it: make bench's
    // events made 1.22 cells each in a drain of a second's ingest, 0.81 in one of two seconds' and 0.60 in one of
    // three seconds' (make bench-summing). On PostgreSQL three seconds against two, in make bench's quick runs taken
    // in turn: fewer drains to wait behind and less to upsert per event (docs/performance-history.md, 2026-11-29
    // 03:43), the delay to the rollups within 4 s, inside the 5 s promised. On SQLite, where the writer thread that
    // commits every batch also runs the drains, a drain of three seconds' batches held the batches behind it for
    // 48-68 ms: one second apart, in quick SQLite runs of make bench (2026-12-07 16:57), the p99 with a manifest was
    // 68.5-94.3 ms against 87.2-107.9 three seconds apart, ingest with it 0.89-0.95x of that without against
    // 0.88-0.91x, at the same CPU per event, and the delay within 2 s.
    this.coalesceMs = options.coalesceMs ?? (db.dialect === 'postgres' ? 3_000 : 1_000);
    this.handOverMs = options.handOverMs ?? 5_000;
    // On SQLite a chunk's read and sums hold the thread that also serves ingest (its upserts are the writer's): a
    // longer rest keeps ingest well above half its speed (measured in make bench with the whole chunk on that thread:
    // 0.51-0.54x with 1, 0.55-0.73x with 1.5; with the upserts on the writer, 0.59-0.64x with 1.5); on PostgreSQL the
    // database sums the chunk, and ingest kept 0.82-0.91x with 1.
    this.restFactor = options.restFactor ?? (db.dialect === 'postgres' ? 1 : 1.5);
  }

  /** Runs in the background until close(). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /** A batch this process committed: its events are summed now, and the next drain adds the sums. */
  committedBatch(batch: BatchEvents): void {
    this.sums.add(batch);
    this.wake();
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

  /** Until nothing is left to do: every committed batch added, every open recompute done, every closed day listed (tests, verify). */
  async catchUp(): Promise<void> {
    for (;;) {
      while ((await this.drainOnce()) > 0);
      if (await this.recomputeOnce()) continue;
      while (!(await this.listOnce()).settled);
      return;
    }
  }

  private async run(): Promise<void> {
    let nextDrainAt = 0;
    while (!this.stopped) {
      try {
        let drained = false;
        const drainAt = performance.now();
        const added = drainAt >= nextDrainAt ? await this.drainOnce({ handOverMs: this.handOverMs }) : 0;
        if (added > 0) {
          drained = true;
          // A full claim leaves more waiting: no pause then, or a steady ingest faster than a claim a
          // pause would outrun the rollups (measured: 29,000 events/s against 200 batches of 100 a second).
          // Counted from the drain's start: a batch committed just after it waits the pause and the next drain,
          // not this one too.
          nextDrainAt = this.backlog ? 0 : drainAt + this.coalesceMs;
        }
        const started = performance.now();
        if (await this.recomputeOnce()) {
          // A recompute takes at most 1 / (1 + restFactor) of the time: ingest goes on meanwhile.
          await this.sleep((performance.now() - started) * this.restFactor, false);
          continue;
        }
        if (performance.now() >= this.nextListLookAt) {
          // Idle, looks go on without a pause until a round found nothing. While batches come, a look at most every
          // LIST_LOOK_EVERY_MS: a day they keep adding to would be listed again after every drain.
          if (!(await this.listOnce()).settled && !drained) continue;
          this.nextListLookAt = performance.now() + LIST_LOOK_EVERY_MS;
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

  /**
   * Adds waiting batches to the rollups: the sums of those this process
   * committed, then up to a claim of the others (with `handOverMs`, only those
   * that waited so long, besides the ones to read back by id). Resolves with
   * how many it took: added, or left to read back.
   */
  async drainOnce(options: { handOverMs?: number } = {}): Promise<number> {
    const summed = await this.addSums();
    const { handOverMs } = options;
    const only =
      handOverMs === undefined ? undefined : { ids: summed.left, createdBefore: new Date(Date.now() - handOverMs).toISOString() };
    const read = await this.readBack(only);
    this.backlog = read.added.length + read.left.length >= this.claim;
    // A full claim may have left some of the batches to read back by id: the next drain takes them.
    const taken = new Set([...read.added.map((b) => b.id), ...read.left]);
    this.sums.readBack([...read.left, ...(this.backlog && only ? only.ids.filter((id) => !taken.has(id)) : [])]);
    for (const orgId of read.unreadable) {
      this.options.logger?.warn({ orgId }, 'rollups: PostgreSQL could not read the metadata of a batch; the service sums it');
    }
    const now = Date.now();
    for (const { createdAt } of [...summed.added, ...read.added]) metrics.rollupDelay.observe((now - Date.parse(createdAt)) / 1000);
    return summed.added.length + read.added.length + read.left.length;
  }

  /**
   * Adds the sums of the batches this process committed, and from then on
   * sums by the rules just read; answers the batches to read back (the
   * sums refused, and those committed before the rules were known).
   */
  private async addSums(): Promise<Pick<Drained, 'added' | 'left'>> {
    const rules = new Map<string, SumRules>();
    for (const orgId of this.sums.organizations()) rules.set(orgId, await sumRulesOf(this.db.kysely, orgId));
    const { summed, unsummed } = this.sums.take(rules);
    if (summed.length === 0) return { added: [], left: unsummed };
    const added = await runWrite(this.db, 'addSummedBatches', { dialect: this.db.dialect, summed });
    return { added: added.added, left: [...unsummed, ...added.left] };
  }

  /** Reads back up to a claim of waiting batches (those `only` chooses) and adds them: on PostgreSQL the database sums them. */
  private async readBack(only: OutboxChoice | undefined): Promise<Drained> {
    if (this.db.dialect === 'postgres') return runWrite(this.db, 'drainRollupOutbox', { claim: this.claim, only });
    const summed = await sumWaitingBatches(this.db.kysely, this.claim, only);
    if (summed.length === 0) return { added: [], left: [], unreadable: [] };
    return runWrite(this.db, 'addSummedBatches', { dialect: 'sqlite', summed });
  }

  /**
   * Lists a few closed days of the next few organizations whose list is
   * missing or no longer holds, each with the parts its statistic's answers
   * read (all four for a statistic no manifest has). Resolves with how many,
   * and whether a whole round of the organizations has now found none (the
   * lists are settled).
   */
  async listOnce(): Promise<{ listed: number; settled: boolean }> {
    const before = closedBefore();
    const orgIds = await rollupOrganizationsAfter(this.db.kysely, this.listedAfter, this.listOrganizations);
    const days = await unlistedDays(this.db.kysely, before, LISTS_PER_STEP, orgIds);
    const aggregations = new Map<string, Map<string, Aggregation>>();
    for (const day of days) {
      let ofOrg = aggregations.get(day.orgId);
      if (!ofOrg) {
        const definitions = (await manifestsOfOrg(this.db.kysely, day.orgId)).flatMap((m) => m.definitions);
        aggregations.set(day.orgId, (ofOrg = new Map(definitions.map((d) => [d.id, d.aggregation]))));
      }
      const aggregation = ofOrg.get(day.statisticId);
      await this.db.transaction((trx) => listDay(trx, this.db.dialect, day, aggregation ? partsOfAggregation[aggregation] : ALL_PARTS));
    }
    // On to the next organizations even after a full step: one whose days ingest keeps changing must not hold the
    // others up. What it has left waits for the next round.
    this.listedThisRound += days.length;
    if (orgIds.length === this.listOrganizations) {
      this.listedAfter = orgIds.at(-1) ?? '';
      return { listed: days.length, settled: false };
    }
    const settled = this.listedThisRound === 0;
    this.listedAfter = '';
    this.listedThisRound = 0;
    return { listed: days.length, settled };
  }

  /** One chunk of one open recompute whose lease this worker holds or can take; false when there was none. */
  async recomputeOnce(): Promise<boolean> {
    const now = new Date();
    for (const orgId of await recomputesOpen(this.db.kysely, this.owner, now.toISOString())) {
      const until = new Date(now.getTime() + this.leaseMs).toISOString();
      if (!(await takeLease(this.db.kysely, orgId, this.owner, now.toISOString(), until))) continue;
      let finished: boolean;
      try {
        finished = await this.recomputeChunk(orgId, until, this.db.dialect === 'postgres' ? 'database' : 'service');
      } catch (err) {
        // Metadata PostgreSQL cannot read as jsonb: this chunk's rules run here instead.
        if (!isDataException(err)) throw err;
        this.options.logger?.warn({ err, orgId }, 'rollups: PostgreSQL could not read a chunk of the recompute; the service sums it');
        finished = await this.recomputeChunk(orgId, until, 'service');
      }
      if (finished) await this.deleteReplaced(orgId);
      return true;
    }
    return false;
  }

  /**
   * Adds the next chunk of events to the generation under recompute; true when it then replaced the answering one.
   * On PostgreSQL the database sums the chunk (`database`): the service's thread, busy with ingest, only waits.
   * Summed by the service, the chunk is read and summed here and its sums added by the writer (rollup-recompute.ts);
   * only the last look, which finds no event left and ends the recompute, is a transaction of this thread's.
   */
  private async recomputeChunk(orgId: string, leaseUntil: string, summedIn: 'database' | 'service'): Promise<boolean> {
    if (summedIn === 'service') {
      const summed = await sumNextChunk(this.db.kysely, this.db.dialect, orgId, { owner: this.owner, until: leaseUntil }, this.chunk);
      if (summed === 'lost') return false;
      if (summed !== 'done') {
        if (await runWrite(this.db, 'addRecomputedChunk', summed)) metrics.rollupRecomputed.inc(summed.counted);
        return false;
      }
    }
    return this.db.transaction(async (trx) => {
      const target = recomputeLedBy(await stateFor(trx, orgId, { dialect: this.db.dialect, mode: 'update' }), this.owner);
      if (!target) return false;
      const { after } = target;
      const first = await firstEventAfter(trx, orgId, after);
      if (first) {
        // Summed by the service, events stored since its look are the next chunk's.
        if (summedIn === 'service') return false;
        const chunk = chunkFrom(orgId, target.generation, after, first, this.chunk);
        const definitions = definitionsByApp(await manifestsOfOrg(trx, orgId));
        const added = await addChunkInDatabase(trx, chunk, definitions, daysSpanned(first.ts, chunk.through, target.timeZone));
        metrics.rollupRecomputed.inc(added.counted);
        // Nothing read (the first event was deleted meanwhile): the next look finds the one after it.
        if (added.last) await advanceScan(trx, orgId, added.last, leaseUntil);
        return false;
      }
      await updateState(trx, orgId, {
        generation: target.generation,
        time_zone: target.timeZone,
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
      await deleteAppliedOutbox(trx, orgId);
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

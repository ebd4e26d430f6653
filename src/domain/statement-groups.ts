import { storeBatchesInOneStatement, type StatementOutcome } from '../data/event-batch';
import { ExternalIdLinks } from '../data/link-cache';
import type { Executor } from '../data/schema';
import { retryingConflicts } from '../data/transaction';
import type { JudgedBatch } from './event-ingest';

export type StatementResult = StatementOutcome | 'declined' | 'rules_changed';

interface Waiting {
  judged: JudgedBatch;
  resolve(result: StatementResult): void;
  reject(error: unknown): void;
}

/** The batches of one app judged by the same rules: those stored now, and those waiting for their turn. */
interface Lane {
  running: number;
  waiting: Waiting[];
}

/** Stores judged batches of one app, judged by the same rules, in one statement (storeBatchesInOneStatement). */
function storeInOneStatement(
  db: Executor,
  batches: [JudgedBatch, ...JudgedBatch[]],
  links?: ExternalIdLinks,
): Promise<StatementOutcome[] | 'declined' | 'rules_changed'> {
  const { ctx, month, quota, judgedBy } = batches[0];
  const statementBatches = batches.map((judged) => ({ origin: judged.ctx, events: judged.candidates }));
  return storeBatchesInOneStatement(db, ctx.principal, month, quota, statementBatches, judgedBy, links);
}

/** Stores one judged batch in a statement of its own. */
export async function storeAloneInOneStatement(db: Executor, judged: JudgedBatch, links?: ExternalIdLinks): Promise<StatementResult> {
  return resultOf(await storeInOneStatement(db, [judged], links), 0);
}

/** What a statement decided for its batch `i`. */
function resultOf(decided: StatementOutcome[] | 'declined' | 'rules_changed', i: number): StatementResult {
  if (typeof decided === 'string') return decided;
  const outcome = decided[i];
  if (!outcome) throw new Error(`the batch statement decided nothing for its batch ${i}`);
  return outcome;
}

/** How many statements an app's lane runs at once, and how many events each takes. */
export interface StatementLimits {
  /** At most this many statements at once. */
  perApp: number;
  /** Events a statement takes, at most (its first batch always goes in, whatever its size). */
  maxEvents: number;
  /** Beyond the first statement, another starts only while at least this many events wait. */
  anotherOnceWaiting: number;
}

/**
 * PostgreSQL: the batches stored without a transaction (no Idempotency-Key),
 * one statement at a time for an app and the rules its batches were judged
 * by, and up to `perApp` at once while `anotherOnceWaiting` events wait. Its
 * batches that arrive meanwhile wait, and go together into the next
 * statement, up to `maxEvents` events: one round trip, one commit and one
 * statement's fixed cost for several batches, each judged and answered as if
 * stored alone. Other apps' batches do not wait for them. A group that one of
 * its batches makes fail or decline is stored batch by batch, so that each
 * gets its own outcome. The externalIds' links its statements find, the next
 * ones take as found (ExternalIdLinks).
 */
export class StatementGroups {
  private readonly lanes = new Map<string, Lane>();
  private readonly links = new ExternalIdLinks();

  constructor(
    private readonly db: Executor,
    private readonly limits: StatementLimits,
  ) {}

  store(judged: JudgedBatch): Promise<StatementResult> {
    const { orgId, appId, integrationId } = judged.ctx.principal;
    const key = JSON.stringify([orgId, appId, integrationId, judged.month, judged.quota, judged.judgedBy]);
    const lane = this.lanes.get(key) ?? { running: 0, waiting: [] };
    this.lanes.set(key, lane);
    return new Promise((resolve, reject) => {
      lane.waiting.push({ judged, resolve, reject });
      this.next(key, lane);
    });
  }

  private next(key: string, lane: Lane): void {
    while (lane.waiting.length > 0 && (lane.running === 0 || (lane.running < this.limits.perApp && this.enoughWaits(lane)))) {
      const group = this.takeGroup(lane);
      lane.running += 1;
      void this.run(group).finally(() => {
        lane.running -= 1;
        if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(key);
        else this.next(key, lane);
      });
    }
  }

  private enoughWaits(lane: Lane): boolean {
    return lane.waiting.reduce((events, { judged }) => events + judged.candidates.length, 0) >= this.limits.anotherOnceWaiting;
  }

  /** The waiting batches that fit in one statement, in the order they came; the first always does. */
  private takeGroup(lane: Lane): Waiting[] {
    let events = 0;
    const taken = lane.waiting.findIndex(({ judged }, i) => {
      events += judged.candidates.length;
      return i > 0 && events > this.limits.maxEvents;
    });
    const count = taken === -1 ? lane.waiting.length : taken;
    return lane.waiting.splice(0, count);
  }

  private async run(group: Waiting[]): Promise<void> {
    const [first, ...rest] = group;
    if (!first) return;
    if (rest.length === 0) return this.alone(first);
    let outcomes: StatementOutcome[] | 'declined' | 'rules_changed';
    try {
      outcomes = await retryingConflicts(() => storeInOneStatement(this.db, [first.judged, ...rest.map((w) => w.judged)], this.links));
    } catch {
      // Nothing was written: each batch alone finds out which one it was, and the others are stored.
      await Promise.all(group.map((w) => this.alone(w)));
      return;
    }
    if (outcomes === 'declined') await Promise.all(group.map((w) => this.alone(w)));
    else group.forEach((w, i) => settle(w, () => resultOf(outcomes, i)));
  }

  private async alone(waiting: Waiting): Promise<void> {
    try {
      waiting.resolve(await retryingConflicts(() => storeAloneInOneStatement(this.db, waiting.judged, this.links)));
    } catch (err) {
      waiting.reject(err);
    }
  }
}

function settle(waiting: Waiting, result: () => StatementResult): void {
  try {
    waiting.resolve(result());
  } catch (err) {
    waiting.reject(err);
  }
}

import type { Transaction } from 'kysely';
import type { Reply, Schema } from '../contract/types';
import { serializedJson, type TypedValidator } from '../contract/validators';
import type { Db, Dialect } from '../data/db';
import { insertEvents, type NewTimelineEntry } from '../data/events';
import { newIds } from '../data/ids';
import { insertOutbox } from '../data/rollups';
import type { Database } from '../data/schema';
import { monthOf, reserveEvents, type IngestRules, type RulesVersion } from '../data/usage';
import type { WriteJob } from '../data/writer';
import { ApiError, errorDetail, statusOf } from '../errors';
import { metrics } from '../metrics';
import { ActorResolver } from './actors';
import type { BatchEvents } from './rollup-drain';
import type { RollupEvent } from './rollup-rules';
import type { Principal } from './authenticator';
import type { KeptRules } from './ingest-rules';
import { withStoredReply, type ClaimTicket, type RenderedReply } from './idempotency';
import { storeAloneInOneStatement, type StatementGroups, type StatementResult } from './statement-groups';
import { judgeSchema, normalizedInstant, UNREPRESENTABLE_TIMESTAMP, type Rejection } from './judgement';

export interface BatchOutcome {
  accepted: Schema<'AcceptedEvent'>[];
  rejected: Schema<'RejectedEvent'>[];
  /** The worker each accepted event was stored for, in order. */
  workerIds: string[];
}

export interface BatchContext {
  principal: Principal;
  requestId: string;
  receivedAt: Date;
}

/** An event that passed so far, with the id it is stored under if it is. */
interface Candidate {
  index: number;
  id: string;
  event: Schema<'IngestEvent'>;
  ts: string;
  /** The instant `ts` names (ms): what the rollups read, so that they need not parse `ts` again. */
  instant: number;
  /**
   * The event's metadata as stored (JSON text; null when none), made once when
   * its size was checked. Storing writes this and never reads event.metadata,
   * which a batch sent to SQLite's writer thread does not carry (batchToCommit).
   */
  metadataJson: string | null;
}

/** A batch judged on everything that needs no transaction, ready for storeBatch. */
export interface JudgedBatch {
  ctx: BatchContext;
  month: string;
  /** The organization's monthly event quota; null when unlimited. */
  quota: number | null;
  /** The events that passed so far, in order. */
  candidates: Candidate[];
  rejected: Schema<'RejectedEvent'>[];
  /** The database it is stored in. */
  dialect: Dialect;
  /** Whether storing tries one statement first: on PostgreSQL, until that statement has declined this batch. */
  oneStatement: boolean;
  /** The version of the kept rules the batch was judged by, which the statement storing it checks; null when they were read for it. */
  judgedBy: RulesVersion | null;
}

/**
 * Judges each event on its own, in order, on what needs no transaction:
 * schema, actor, timestamp, whitelist, statisticId. A month whose quota is
 * already used up refuses the whole batch. The app's rules come from
 * `keptRules`, read for this batch when `fresh`.
 */
export async function judgeBatch(
  db: Db,
  validate: TypedValidator<Schema<'IngestEvent'>>,
  items: unknown[],
  ctx: BatchContext,
  keptRules: KeptRules,
  fresh: boolean,
): Promise<JudgedBatch> {
  metrics.batchSize.observe(items.length);
  const month = monthOf(ctx.receivedAt);
  const { rules, kept } = await keptRules.rulesFor(ctx.principal.appId, month, fresh);
  if (rules.quota && rules.quota.used >= rules.quota.limit) {
    metrics.quotaRefusals.inc();
    throw new ApiError('quota_exceeded', `The organization's monthly event quota of ${rules.quota.limit} is exhausted for ${month}.`);
  }
  // Drawn for every item, so that each candidate is made whole at once (copying objects to add an id cost
  // more than the rest of making ids, measured); a rejected item's id is never used.
  const ids = newIds('evt', items.length);
  const candidates: Candidate[] = [];
  const rejected: Schema<'RejectedEvent'>[] = [];
  items.forEach((item, index) => {
    const verdict = judgeEvent(validate, item, index, ids[index] as string, ctx.receivedAt, rules);
    if ('code' in verdict) rejected.push({ index, code: verdict.code, message: verdict.message });
    else candidates.push(verdict);
  });
  return {
    ctx,
    month,
    quota: rules.quota?.limit ?? null,
    candidates,
    rejected,
    dialect: db.dialect,
    oneStatement: db.dialect === 'postgres',
    judgedBy: kept ? rules.version : null,
  };
}

/**
 * A batch sent without an Idempotency-Key, judged by the app's kept rules and
 * stored alone in one statement when it can (storeBatchAlone). The statement
 * checks the kept rules: when they changed, or when no statement ran (no event
 * passed), the batch is judged again by the stored ones. Returns the batch as
 * judged, and its outcome unless it needs storeBatch in a transaction.
 */
export async function judgeAndStoreAlone(
  db: Db,
  statements: StatementGroups,
  kept: KeptRules,
  validate: TypedValidator<Schema<'IngestEvent'>>,
  items: unknown[],
  ctx: BatchContext,
): Promise<{ judged: JudgedBatch; outcome?: BatchOutcome }> {
  const first = await judgeBatch(db, validate, items, ctx, kept, false);
  const stored = await storeBatchAlone(statements, first);
  if (typeof stored === 'object') return { judged: first, outcome: stored };
  // Declined by the statement, which found the kept rules current: as good as read for the batch.
  if (!first.judgedBy || (stored === 'declined' && first.candidates.length > 0)) return { judged: { ...first, judgedBy: null } };
  const judged = await judgeBatch(db, validate, items, ctx, kept, true);
  const again = await storeBatchAlone(statements, judged);
  return typeof again === 'object' ? { judged, outcome: again } : { judged };
}

/**
 * Inside the request's transaction, judges what needs it (workerId, monthly
 * quota) and stores the accepted events, the workers they need and the quota
 * they use. Leaves the batch's events as they were: the transaction may be run again.
 */
export async function storeBatch(trx: Transaction<Database>, judged: JudgedBatch): Promise<BatchOutcome> {
  const { ctx, dialect, month, quota, candidates } = judged;
  // Most batches name workers that exist: one statement judges and stores them.
  const done = await inOneStatement(judged, (j) => storeAloneInOneStatement(trx, j));
  if (typeof done === 'object') return done;
  if (done === 'rules_changed') throw new Error('a batch judged by kept rules is stored alone (judgeAndStoreAlone), not by storeBatch');

  const resolver = new ActorResolver(trx, ctx.principal);
  await resolver.prefetch(candidates.map((c) => c.event.actor));
  const known = (c: Candidate) => !c.event.actor.workerId || resolver.knownWorkerId(c.event.actor.workerId);
  const resolvable = candidates.filter(known).length;
  // The usage counter is one row per organization, locked from its update until commit. With a
  // quota it must be reserved before deciding which events fit; without one it is only counted,
  // as the last write of the batch, so concurrent batches of the organization hold it for as little as possible.
  const granted = quota === null ? resolvable : await reserveEvents(trx, dialect, ctx.principal.orgId, month, resolvable, quota);
  const split = splitBatch(judged, known, granted);
  const resolved = await resolver.resolveAll(split.stored, (c) => c.event.actor);
  const entries: NewTimelineEntry[] = resolved.map(({ item: { id, event, ts, metadataJson }, worker }) => ({
    kind: 'event',
    id,
    workerId: worker.id,
    ts,
    event,
    metadataJson,
  }));
  await insertEvents(trx, ctx, entries);
  // The rollups worker adds the batch once it is committed (src/domain/rollups.ts).
  await insertOutbox(trx, { orgId: ctx.principal.orgId, appId: ctx.principal.appId, events: split.stored });
  if (quota === null) await reserveEvents(trx, dialect, ctx.principal.orgId, month, split.stored.length, null);
  return outcomeOf(
    split,
    resolved.map(({ worker }) => worker.id),
  );
}

/**
 * A committed batch as the rollups take it: its outbox row's id (its first
 * event's), organization and app, and its events as the rules read them
 * (built only when asked: an app without statistics sums none); undefined when nothing was stored.
 */
export function committedEvents(judged: JudgedBatch, outcome: BatchOutcome): BatchEvents | undefined {
  const [first] = outcome.accepted;
  if (!first) return undefined;
  const { orgId, appId } = judged.ctx.principal;
  return { orgId, appId, batchId: first.id, events: () => storedEvents(judged, outcome) };
}

function storedEvents(judged: JudgedBatch, { accepted, workerIds }: BatchOutcome): RollupEvent[] {
  const { candidates } = judged;
  const events: RollupEvent[] = [];
  // The accepted events are candidates in their order (splitBatch keeps it): one walk finds each. Were one
  // missed, the throw leaves the whole batch unsummed, to be read back from the store.
  let c = 0;
  for (const [i, { id }] of accepted.entries()) {
    while (c < candidates.length && candidates[c]?.id !== id) c++;
    const candidate = candidates[c];
    const workerId = workerIds[i];
    if (!candidate || workerId === undefined) throw new Error(`accepted event ${id} is not a candidate of its batch, in order`);
    const { event, instant } = candidate;
    events.push({
      workerId,
      instant,
      eventType: event.eventType,
      category: event.category ?? null,
      statisticId: event.statisticId ?? null,
      duration: event.duration ?? null,
      pillar: event.pillar ?? null,
      metadata: event.metadata ?? null,
    });
  }
  return events;
}

/** What the reply to a batch says besides its outcome. */
export interface ReplyContext {
  requestId: string;
  /** The number of events the request sent. */
  size: number;
  batchLimit: number;
  /** Where the client reached us, for docsUrl. */
  baseUrl: string;
}

/** 202 when every event is accepted, 207 when some are, else the status of the first rejection's code. */
export function renderBatch(context: ReplyContext, outcome: BatchOutcome): RenderedReply {
  const { requestId, size, batchLimit, baseUrl } = context;
  const body: Reply<'ingestEvents', 202> = {
    requestId,
    accepted: outcome.accepted.length,
    rejected: outcome.rejected.length,
    batchLimit,
    results: { accepted: outcome.accepted, rejected: outcome.rejected },
  };
  const [first] = outcome.rejected;
  if (!first) return { status: 202, body: JSON.stringify(body) };
  if (outcome.accepted.length > 0) return { status: 207, body: JSON.stringify(body) };
  const message = `All ${size} events were rejected; the first: ${first.message}`;
  const rejected: Schema<'BatchRejectedResponse'> = { error: errorDetail(first.code, message, requestId, baseUrl), ...body, accepted: 0 };
  return { status: statusOf(first.code), body: JSON.stringify(rejected) };
}

/** A judged batch to store with its reply: plain data, so that a writer thread can do it. */
export interface BatchToCommit {
  judged: JudgedBatch;
  reply: ReplyContext;
  /** The request's claimed Idempotency-Key, whose reply commits with the batch. */
  claim: ClaimTicket | undefined;
}

export interface CommittedBatch {
  outcome: BatchOutcome;
  reply: RenderedReply;
}

/**
 * The batch to store with its reply, as storeBatchWithReply takes it: without
 * the events' metadata objects, which storing does not read (it writes
 * metadataJson), and which cost SQLite's two threads more to copy between
 * them than the rest of the event (measured).
 */
export function batchToCommit(judged: JudgedBatch, reply: ReplyContext, claim: ClaimTicket | undefined): BatchToCommit {
  const candidates = judged.candidates.map((c) => ({ ...c, event: { ...c.event, metadata: undefined } }));
  return { judged: { ...judged, candidates }, reply, claim };
}

/** A job of the writer thread (src/domain/writes.ts): storeBatch, the reply rendered and stored in the same transaction. */
export const storeBatchWithReply: WriteJob<BatchToCommit, CommittedBatch> = (trx, { judged, reply, claim }) =>
  withStoredReply(
    trx,
    (t) => storeBatch(t, judged),
    (outcome) => renderBatch(reply, outcome),
    claim,
    judged.ctx.requestId,
  );

/**
 * Stores the batch without a transaction when one statement can (see
 * storeBatchesInOneStatement), maybe with other batches of its app
 * (StatementGroups): that statement commits alone, atomically. Otherwise
 * nothing was stored: 'rules_changed' when the kept rules it was judged by
 * changed, else 'declined' (then storeBatch, in a transaction, stores it).
 */
function storeBatchAlone(statements: StatementGroups, judged: JudgedBatch): Promise<BatchOutcome | 'declined' | 'rules_changed'> {
  return inOneStatement(judged, (j) => statements.store(j));
}

/** The batch stored by `store` when one statement can store it; 'declined' without trying when it cannot. */
async function inOneStatement(
  judged: JudgedBatch,
  store: (judged: JudgedBatch) => Promise<StatementResult>,
): Promise<BatchOutcome | 'declined' | 'rules_changed'> {
  if (!judged.oneStatement || judged.candidates.length === 0) return 'declined';
  const done = await store(judged);
  if (done === 'rules_changed') return done;
  if (done === 'declined') {
    judged.oneStatement = false;
    return done;
  }
  const unknown = new Set(done.unknownWorkerIds);
  return outcomeOf(
    splitBatch(judged, (c) => !unknown.has(c.index), done.granted),
    done.workerIds,
  );
}

interface SplitBatch {
  stored: Candidate[];
  rejected: Schema<'RejectedEvent'>[];
}

/** The candidates whose workerId is `known`, the first `granted` of them stored, the others rejected with why. */
function splitBatch(judged: JudgedBatch, known: (c: Candidate) => boolean, granted: number): SplitBatch {
  const rejected = [...judged.rejected];
  const resolvable = judged.candidates.filter((c) => {
    if (known(c)) return true;
    rejected.push({
      index: c.index,
      code: 'worker_not_found',
      message: `/events/${c.index}/actor/workerId "${c.event.actor.workerId}" is not a worker of this organization`,
    });
    return false;
  });
  for (const { index } of resolvable.slice(granted)) {
    rejected.push({
      index,
      code: 'quota_exceeded',
      message: `/events/${index} is beyond what is left of the organization's monthly event quota for ${judged.month}`,
    });
  }
  return { stored: resolvable.slice(0, granted), rejected: rejected.sort((a, b) => a.index - b.index) };
}

function outcomeOf(split: SplitBatch, workerIds: string[]): BatchOutcome {
  return {
    accepted: split.stored.map(({ id, event, ts }) => ({ eventType: event.eventType, timestamp: ts, id })),
    rejected: split.rejected,
    workerIds,
  };
}

function judgeEvent(
  validate: TypedValidator<Schema<'IngestEvent'>>,
  item: unknown,
  index: number,
  id: string,
  receivedAt: Date,
  rules: IngestRules,
): Rejection | Candidate {
  const pointer = `/events/${index}`;
  const verdict = judgeSchema(validate, item, pointer);
  if ('code' in verdict) return verdict;
  const event = verdict.value;
  const at = normalizedInstant(event.timestamp, receivedAt);
  if (!at) return { code: 'invalid_body', message: `${pointer}/timestamp ${UNREPRESENTABLE_TIMESTAMP}` };
  if (!rules.allowedEventTypes.has(event.eventType)) {
    return { code: 'forbidden_event_type', message: `${pointer}/eventType "${event.eventType}" is not in the app's allowedEventTypes` };
  }
  if (event.statisticId !== undefined && !rules.statisticIds.has(event.statisticId)) {
    return { code: 'invalid_body', message: `${pointer}/statisticId "${event.statisticId}" is not in the app's statistic manifest` };
  }
  return { index, id, event, ts: at.text, instant: at.ms, metadataJson: serializedJson(event.metadata) };
}

import type { Transaction } from 'kysely';
import type { Schema } from '../contract/types';
import type { TypedValidator } from '../contract/validators';
import { insertEvents } from '../data/events';
import { newId } from '../data/ids';
import type { Database } from '../data/schema';
import { upsertCurrentSnapshot, type MetricEntry } from '../data/snapshots';
import type { WorkerRef } from '../data/workers';
import { ApiError } from '../errors';
import { ActorResolver } from './actors';
import type { Principal } from './authenticator';
import { judgeSchema, normalizeTimestamp, UNREPRESENTABLE_TIMESTAMP } from './judgement';
import { metricsInSentOrder } from './metric-order';

export interface SnapshotContext {
  principal: Principal;
  requestId: string;
  receivedAt: Date;
  /** The request body as sent, to keep the metrics in their sent order. */
  rawBody: Buffer | undefined;
}

/** A snapshot that passed every check that needs no transaction, ready for storeSnapshot. */
export interface JudgedSnapshot {
  ctx: SnapshotContext;
  snapshot: Schema<'IngestSnapshot'>;
  ts: string;
  metrics: MetricEntry[];
}

/** Judges the snapshot against its schema and its timestamp; throws the contract's error for the first issue. */
export function judgeSnapshot(validate: TypedValidator<Schema<'IngestSnapshot'>>, body: unknown, ctx: SnapshotContext): JudgedSnapshot {
  const verdict = judgeSchema(validate, body, '');
  if ('code' in verdict) throw new ApiError(verdict.code, verdict.message);
  const snapshot = verdict.value;
  const ts = normalizeTimestamp(snapshot.timestamp, ctx.receivedAt);
  if (!ts) throw new ApiError('invalid_body', `/timestamp ${UNREPRESENTABLE_TIMESTAMP}`);
  return { ctx, snapshot, ts, metrics: metricsInSentOrder(snapshot.metrics, ctx.rawBody) };
}

/**
 * Inside the request's transaction, stores the snapshot in history (on the
 * timeline) and makes it the current one of (worker, app, snapshotType)
 * unless a newer one is current.
 */
export async function storeSnapshot(
  trx: Transaction<Database>,
  { ctx, snapshot, ts, metrics }: JudgedSnapshot,
): Promise<{ snapshotType: string; worker: WorkerRef }> {
  const resolver = new ActorResolver(trx, ctx.principal);
  await resolver.prefetch([snapshot.actor]);
  const { workerId } = snapshot.actor;
  if (workerId && !resolver.knownWorkerId(workerId)) {
    throw new ApiError('worker_not_found', `/actor/workerId "${workerId}" is not a worker of this organization`);
  }
  const [{ worker }] = await resolver.resolveAll([snapshot.actor], (actor) => actor);
  const eventId = newId('evt');
  await insertEvents(trx, ctx, [{ kind: 'snapshot', id: eventId, workerId: worker.id, ts, snapshot, metrics }]);
  await upsertCurrentSnapshot(trx, {
    ...ctx.principal,
    workerId: worker.id,
    snapshotType: snapshot.snapshotType,
    ts,
    metrics,
    eventId,
  });
  return { snapshotType: snapshot.snapshotType, worker };
}

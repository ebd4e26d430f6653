import type { components } from '../../generated/openapi';
import type { ItemValidator } from '../contract/validators';
import type { Db } from '../data/db';
import { insertEvents } from '../data/events';
import { newId } from '../data/ids';
import { upsertCurrentSnapshot } from '../data/snapshots';
import type { Executor } from '../data/schema';
import type { WorkerRef } from '../data/workers';
import { ApiError } from '../errors';
import { ActorResolver } from './actors';
import type { Principal } from './authenticator';
import { judgeSchema, normalizeTimestamp, UNREPRESENTABLE_TIMESTAMP } from './judgement';
import { metricsInSentOrder } from './metric-order';

type IngestSnapshot = components['schemas']['IngestSnapshot'];

export interface SnapshotContext {
  principal: Principal;
  requestId: string;
  receivedAt: Date;
  /** The request body as sent, to keep the metrics in their sent order. */
  rawBody: Buffer | undefined;
}

/**
 * Stores the snapshot in history (an event row) and makes it the current one of
 * (worker, app, snapshotType) unless a newer one is current, in one transaction
 * that `finish` ends (it may write the response record there too).
 */
export async function ingestSnapshot<R>(
  db: Db,
  validate: ItemValidator,
  body: unknown,
  ctx: SnapshotContext,
  finish: (trx: Executor, stored: { snapshotType: string; worker: WorkerRef }) => Promise<R>,
): Promise<R> {
  const rejection = judgeSchema(validate, body, '');
  if (rejection) throw new ApiError(rejection.code, rejection.message);
  const snapshot = body as IngestSnapshot;
  const ts = normalizeTimestamp(snapshot.timestamp, ctx.receivedAt);
  if (!ts) throw new ApiError('invalid_body', `/timestamp ${UNREPRESENTABLE_TIMESTAMP}`);
  const metrics = metricsInSentOrder(snapshot.metrics, ctx.rawBody);

  return db.transaction(async (trx) => {
    const resolver = new ActorResolver(trx, ctx.principal);
    await resolver.prefetch([snapshot.actor]);
    const { workerId } = snapshot.actor;
    if (workerId && !resolver.knownWorkerId(workerId)) {
      throw new ApiError('worker_not_found', `/actor/workerId "${workerId}" is not a worker of this organization`);
    }
    const resolved = await resolver.resolve(snapshot.actor);
    const eventId = newId('evt');
    await insertEvents(trx, db, [
      {
        id: eventId,
        org_id: ctx.principal.orgId,
        app_id: ctx.principal.appId,
        worker_id: resolved.id,
        integration_id: ctx.principal.integrationId,
        kind: 'snapshot',
        event_type: snapshot.snapshotType,
        category: null,
        ts,
        duration: null,
        pillar: null,
        statistic_id: null,
        metadata: snapshot.metadata === undefined ? null : JSON.stringify(snapshot.metadata),
        metrics: JSON.stringify(metrics),
        request_id: ctx.requestId,
        received_at: ctx.receivedAt.toISOString(),
      },
    ]);
    await upsertCurrentSnapshot(trx, { ...ctx.principal, workerId: resolved.id, snapshotType: snapshot.snapshotType, ts, metrics, eventId });
    return finish(trx, { snapshotType: snapshot.snapshotType, worker: resolved });
  });
}

import type { components } from '../../generated/openapi';
import type { ItemValidator } from '../contract/validators';
import type { Db } from '../data/db';
import { insertEvents } from '../data/events';
import { newIds } from '../data/ids';
import type { Executor, NewEventRow } from '../data/schema';
import { ingestRules, monthOf, reserveEvents, type IngestRules } from '../data/usage';
import { ApiError } from '../errors';
import { ActorResolver } from './actors';
import type { Principal } from './authenticator';
import { judgeSchema, normalizeTimestamp, UNREPRESENTABLE_TIMESTAMP, type Rejection } from './judgement';

type IngestEvent = components['schemas']['IngestEvent'];
type AcceptedEvent = components['schemas']['AcceptedEvent'];
type RejectedEvent = components['schemas']['RejectedEvent'];

export interface BatchOutcome {
  accepted: AcceptedEvent[];
  rejected: RejectedEvent[];
}

export interface BatchContext {
  principal: Principal;
  requestId: string;
  receivedAt: Date;
}

interface Candidate {
  index: number;
  event: IngestEvent;
  ts: string;
}

/**
 * Judges each event on its own, in order (schema, actor, whitelist,
 * statisticId, workerId, monthly quota), and stores the accepted ones, the
 * workers they need and the quota they use in one transaction, which `finish`
 * ends (it may write the response record there too): either all of it is
 * committed before this resolves, or none of it.
 */
export async function ingestEventBatch<R>(
  db: Db,
  validate: ItemValidator,
  items: unknown[],
  ctx: BatchContext,
  finish: (trx: Executor, outcome: BatchOutcome) => Promise<R>,
): Promise<R> {
  const month = monthOf(ctx.receivedAt);
  const rules = await ingestRules(db.kysely, ctx.principal.appId, month);
  if (rules.quota !== null && rules.used >= rules.quota) {
    throw new ApiError('quota_exceeded', `The organization's monthly event quota of ${rules.quota} is exhausted for ${month}.`);
  }

  const judged: RejectedEvent[] = [];
  const candidates: Candidate[] = [];
  items.forEach((item, index) => {
    const verdict = judgeEvent(validate, item, index, ctx.receivedAt, rules);
    if ('code' in verdict) judged.push({ index, ...verdict });
    else candidates.push({ index, ...verdict });
  });

  return db.transaction(async (trx) => {
    const rejected = [...judged];
    const resolver = new ActorResolver(trx, ctx.principal);
    await resolver.prefetch(candidates.map((c) => c.event.actor));
    const resolvable = candidates.filter(({ index, event }) => {
      const workerId = event.actor.workerId;
      if (!workerId || resolver.knownWorkerId(workerId)) return true;
      rejected.push({ index, code: 'worker_not_found', message: `/events/${index}/actor/workerId "${workerId}" is not a worker of this organization` });
      return false;
    });

    // The usage counter is one row per organization, locked from its update until commit. With a
    // quota it must be reserved before deciding which events fit; without one it is only counted,
    // as the last write, so concurrent batches of the organization hold it for the commit alone.
    const granted = rules.quota === null ? resolvable.length : await reserveEvents(trx, ctx.principal.orgId, month, resolvable.length, rules.quota);
    const ids = newIds('evt', granted);
    const accepted: AcceptedEvent[] = [];
    const rows: NewEventRow[] = [];
    for (const [position, { index, event, ts }] of resolvable.entries()) {
      if (position >= granted) {
        rejected.push({ index, code: 'quota_exceeded', message: `/events/${index} is beyond what is left of the organization's monthly event quota for ${month}` });
        continue;
      }
      const worker = await resolver.resolve(event.actor);
      const id = ids[position] as string;
      rows.push(eventRow(id, event, ts, worker.id, ctx));
      accepted.push({ eventType: event.eventType, timestamp: ts, id });
    }
    await insertEvents(trx, db, rows);
    const reply = await finish(trx, { accepted, rejected: rejected.sort((a, b) => a.index - b.index) });
    if (rules.quota === null) await reserveEvents(trx, ctx.principal.orgId, month, rows.length, null);
    return reply;
  });
}

function judgeEvent(validate: ItemValidator, item: unknown, index: number, receivedAt: Date, rules: IngestRules): Rejection | { event: IngestEvent; ts: string } {
  const pointer = `/events/${index}`;
  const schemaRejection = judgeSchema(validate, item, pointer);
  if (schemaRejection) return schemaRejection;
  const event = item as IngestEvent;
  const ts = normalizeTimestamp(event.timestamp, receivedAt);
  if (!ts) return { code: 'invalid_body', message: `${pointer}/timestamp ${UNREPRESENTABLE_TIMESTAMP}` };
  if (!rules.allowedEventTypes.has(event.eventType)) {
    return { code: 'forbidden_event_type', message: `${pointer}/eventType "${event.eventType}" is not in the app's allowedEventTypes` };
  }
  if (event.statisticId !== undefined && !rules.statisticIds.has(event.statisticId)) {
    return { code: 'invalid_body', message: `${pointer}/statisticId "${event.statisticId}" is not in the app's statistic manifest` };
  }
  return { event, ts };
}

function eventRow(id: string, event: IngestEvent, ts: string, workerId: string, ctx: BatchContext): NewEventRow {
  return {
    id,
    org_id: ctx.principal.orgId,
    app_id: ctx.principal.appId,
    worker_id: workerId,
    integration_id: ctx.principal.integrationId,
    kind: 'event',
    event_type: event.eventType,
    category: event.category,
    ts,
    duration: event.duration ?? null,
    pillar: event.pillar ?? null,
    statistic_id: event.statisticId ?? null,
    metadata: event.metadata === undefined ? null : JSON.stringify(event.metadata),
    metrics: null,
    request_id: ctx.requestId,
    received_at: ctx.receivedAt.toISOString(),
  };
}

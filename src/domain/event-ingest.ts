import type { components } from '../../generated/openapi';
import type { ItemValidator } from '../contract/validators';
import { allowedEventTypesOf, findApp } from '../data/admin';
import type { Db } from '../data/db';
import { insertEvents } from '../data/events';
import { newId } from '../data/ids';
import type { NewEventRow } from '../data/schema';
import { statisticIdsOf } from '../data/statistics';
import { inTransaction } from '../data/transaction';
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

interface AppRules {
  allowedEventTypes: ReadonlySet<string>;
  statisticIds: ReadonlySet<string>;
}

interface Candidate {
  index: number;
  event: IngestEvent;
  ts: string;
}

/**
 * Judges each event on its own, in order (schema, actor, whitelist, statisticId,
 * workerId), and stores the accepted ones with the workers they need in one
 * transaction: either all of them are committed before this resolves, or none.
 */
export async function ingestEventBatch(db: Db, validate: ItemValidator, items: unknown[], ctx: BatchContext): Promise<BatchOutcome> {
  const rules = await appRules(db, ctx.principal.appId);
  const rejected: RejectedEvent[] = [];
  const candidates: Candidate[] = [];
  items.forEach((item, index) => {
    const judged = judgeEvent(validate, item, index, ctx.receivedAt, rules);
    if ('code' in judged) rejected.push({ index, ...judged });
    else candidates.push({ index, ...judged });
  });

  const stored = await inTransaction(db, async (trx) => {
    const resolver = new ActorResolver(trx, ctx.principal);
    await resolver.prefetch(candidates.map((c) => c.event.actor));
    const outcome: BatchOutcome = { accepted: [], rejected: [] };
    const rows: NewEventRow[] = [];
    for (const { index, event, ts } of candidates) {
      const workerId = event.actor.workerId;
      if (workerId && !resolver.knownWorkerId(workerId)) {
        outcome.rejected.push({ index, code: 'worker_not_found', message: `/events/${index}/actor/workerId "${workerId}" is not a worker of this organization` });
        continue;
      }
      const worker = await resolver.resolve(event.actor);
      const id = newId('evt');
      rows.push(eventRow(id, event, ts, worker.id, ctx));
      outcome.accepted.push({ eventType: event.eventType, timestamp: ts, id });
    }
    await insertEvents(trx, rows);
    return outcome;
  });

  return { accepted: stored.accepted, rejected: [...rejected, ...stored.rejected].sort((a, b) => a.index - b.index) };
}

async function appRules(db: Db, appId: string): Promise<AppRules> {
  const [app, statisticIds] = await Promise.all([findApp(db.kysely, appId), statisticIdsOf(db.kysely, appId)]);
  return { allowedEventTypes: new Set(app ? allowedEventTypesOf(app) : []), statisticIds };
}

function judgeEvent(validate: ItemValidator, item: unknown, index: number, receivedAt: Date, rules: AppRules): Rejection | { event: IngestEvent; ts: string } {
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

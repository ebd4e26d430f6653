import type { Request, Response } from 'express';
import type { components } from '../../generated/openapi';
import { ingestEventBatch, type BatchOutcome } from '../domain/event-ingest';
import { statusOf } from '../errors';
import { errorDetailFor, replyWithin, sendReply, type Reply } from '../http/respond';
import type { Services } from '../services';

type IngestBatchResponse = components['schemas']['IngestBatchResponse'];
type BatchRejectedResponse = components['schemas']['BatchRejectedResponse'];

export function ingestEvents(services: Services) {
  return async (req: Request, res: Response): Promise<void> => {
    const { events } = req.body as { events: unknown[] };
    const ctx = { principal: req.principal, requestId: req.requestId, receivedAt: new Date() };
    const render = (outcome: BatchOutcome) => renderBatch(req, outcome, events.length, services.config.ingestBatchLimit);
    sendReply(res, await ingestEventBatch(services.db, services.validate.event, events, ctx, replyWithin(req, render)));
  };
}

/** 202 when every event is accepted, 207 when some are, else the status of the first rejection's code. */
function renderBatch(req: Request, outcome: BatchOutcome, size: number, batchLimit: number): Reply {
  const body: IngestBatchResponse = {
    requestId: req.requestId,
    accepted: outcome.accepted.length,
    rejected: outcome.rejected.length,
    batchLimit,
    results: outcome,
  };
  const [first] = outcome.rejected;
  if (!first) return { status: 202, body: JSON.stringify(body) };
  if (outcome.accepted.length > 0) return { status: 207, body: JSON.stringify(body) };
  const message = `All ${size} events were rejected; the first: ${first.message}`;
  const rejected: BatchRejectedResponse = { error: errorDetailFor(req, first.code, message), ...body, accepted: 0 };
  return { status: statusOf(first.code), body: JSON.stringify(rejected) };
}

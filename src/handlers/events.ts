import type { Request, Response } from 'express';
import type { components } from '../../generated/openapi';
import { ingestEventBatch } from '../domain/event-ingest';
import { statusOf } from '../errors';
import { errorDetailFor, sendJson } from '../http/respond';
import type { Services } from '../services';

type IngestBatchResponse = components['schemas']['IngestBatchResponse'];
type BatchRejectedResponse = components['schemas']['BatchRejectedResponse'];

/** 202 when every event is accepted, 207 when some are, else the status of the first rejection's code. */
export function ingestEvents(services: Services) {
  return async (req: Request, res: Response): Promise<void> => {
    const { events } = req.body as { events: unknown[] };
    const outcome = await ingestEventBatch(services.db, services.validate.event, events, {
      principal: req.principal,
      requestId: req.requestId,
      receivedAt: new Date(),
    });
    const body: IngestBatchResponse = {
      requestId: req.requestId,
      accepted: outcome.accepted.length,
      rejected: outcome.rejected.length,
      batchLimit: services.config.ingestBatchLimit,
      results: outcome,
    };
    const [first] = outcome.rejected;
    if (!first) {
      sendJson(res, 202, body);
    } else if (outcome.accepted.length > 0) {
      sendJson(res, 207, body);
    } else {
      const message = `All ${events.length} events were rejected; the first: ${first.message}`;
      const rejectedBody: BatchRejectedResponse = { error: errorDetailFor(req, first.code, message), ...body, accepted: 0 };
      sendJson(res, statusOf(first.code), rejectedBody);
    }
  };
}

import type { Reply, Schema } from '../../contract/types';
import { judgeBatch, storeBatch, storeBatchAlone, type BatchOutcome } from '../../domain/event-ingest';
import { statusOf } from '../../errors';
import { countBatch } from '../../metrics';
import type { OperationHandler, OperationRequest } from '../../http/operation';
import { commitWithReply, errorDetailFor, sendReply, type RenderedReply } from '../../http/respond';
import type { Services } from '../../services';

export function ingestEvents(services: Services): OperationHandler<'ingestEvents'> {
  return async (req, res) => {
    // Only the envelope was checked (x-item-validation): the domain judges each event as it was sent.
    const items: unknown[] = req.body.events;
    const ctx = { principal: req.principal, requestId: req.requestId, receivedAt: new Date() };
    const judged = await judgeBatch(services.db, services.validate.event, items, ctx);
    const render = (stored: BatchOutcome) => renderBatch(req, stored, items.length, services.config.ingestBatchLimit);
    // Without an Idempotency-Key no reply is stored with the data: a batch one statement stores needs no transaction.
    const alone = req.idempotency ? undefined : await storeBatchAlone(services.db, judged);
    const { outcome, reply } = alone
      ? { outcome: alone, reply: render(alone) }
      : await commitWithReply(req, services.db, (trx) => storeBatch(trx, judged), render);
    countBatch(outcome);
    if (outcome.accepted.length > 0) services.rollups.wake();
    sendReply(res, reply);
  };
}

/** 202 when every event is accepted, 207 when some are, else the status of the first rejection's code. */
function renderBatch(req: OperationRequest<'ingestEvents'>, outcome: BatchOutcome, size: number, batchLimit: number): RenderedReply {
  const body: Reply<'ingestEvents', 202> = {
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
  const rejected: Schema<'BatchRejectedResponse'> = { error: errorDetailFor(req, first.code, message), ...body, accepted: 0 };
  return { status: statusOf(first.code), body: JSON.stringify(rejected) };
}

import { batchToCommit, committedEvents, judgeAndStoreAlone, judgeBatch, renderBatch } from '../../domain/event-ingest';
import { runWrite } from '../../domain/writes';
import { countBatch } from '../../metrics';
import type { OperationHandler } from '../../http/operation';
import { baseUrlFor, committedWithClaim, sendReply } from '../../http/respond';
import type { Services } from '../../services';

export function ingestEvents(services: Services): OperationHandler<'ingestEvents'> {
  return async (req, res) => {
    // Only the envelope was checked (x-item-validation): the domain judges each event as it was sent.
    const items: unknown[] = req.body.events;
    const ctx = { principal: req.principal, requestId: req.requestId, receivedAt: new Date() };
    // Without an Idempotency-Key no reply is stored with the data: a batch one statement stores needs no transaction.
    const { judged, outcome: alone } = req.idempotency
      ? { judged: await judgeBatch(services.db, services.validate.event, items, ctx, services.keptRules, true), outcome: undefined }
      : await judgeAndStoreAlone(services.db, services.statements, services.keptRules, services.validate.event, items, ctx);
    const replyContext = {
      requestId: req.requestId,
      size: items.length,
      batchLimit: services.config.ingestBatchLimit,
      baseUrl: baseUrlFor(req),
    };
    const { outcome, reply } = alone
      ? { outcome: alone, reply: renderBatch(replyContext, alone) }
      : await committedWithClaim(req, (claim) => runWrite(services.db, 'storeBatch', batchToCommit(judged, replyContext, claim)));
    countBatch(outcome);
    sendReply(res, reply);
    // After the reply: summing the batch for the rollups is not the client's wait.
    const committed = committedEvents(judged, outcome);
    if (committed) services.rollups.committedBatch(committed);
  };
}

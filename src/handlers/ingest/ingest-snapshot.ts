import type { Reply } from '../../contract/types';
import { judgeSnapshot, storeSnapshot } from '../../domain/snapshot-ingest';
import type { OperationHandler } from '../../http/operation';
import { commitWithReply, sendReply } from '../../http/respond';
import { metrics } from '../../metrics';
import type { Services } from '../../services';

export function ingestSnapshot(services: Services): OperationHandler<'ingestSnapshot'> {
  return async (req, res) => {
    const ctx = { principal: req.principal, requestId: req.requestId, receivedAt: new Date(), rawBody: req.rawBody };
    const judged = judgeSnapshot(services.validate.snapshot, req.body, ctx);
    const { reply } = await commitWithReply(
      req,
      services.db,
      (trx) => storeSnapshot(trx, judged),
      (stored) => {
        const body: Reply<'ingestSnapshot', 202> = { requestId: req.requestId, ok: true, ...stored };
        return { status: 202, body: JSON.stringify(body) };
      },
    );
    metrics.snapshotsAccepted.inc();
    sendReply(res, reply);
  };
}

import { snapshotHistory, worker, workers } from '../../domain/console-read';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';
import type { Services } from '../../services';

/** GET /api/v1/console/workers */
export function listWorkers(services: Services): OperationHandler<'listWorkers'> {
  return async (req, res) => {
    sendJson(res, 200, await workers(services.read, req.member.orgId, req.query));
  };
}

/** GET /api/v1/console/workers/{workerId} */
export function getWorker(services: Services): OperationHandler<'getWorker'> {
  return async (req, res) => {
    sendJson(res, 200, await worker(services.read, req.member.orgId, req.params.workerId));
  };
}

/** GET /api/v1/console/workers/{workerId}/snapshots */
export function listWorkerSnapshots(services: Services): OperationHandler<'listWorkerSnapshots'> {
  return async (req, res) => {
    sendJson(res, 200, await snapshotHistory(services.read, req.member.orgId, req.params.workerId, req.query));
  };
}

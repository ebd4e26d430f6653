import type { Reply } from '../../contract/types';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';
import type { Services } from '../../services';

/** GET /api/v1/apps/statistics: the manifest of the key's app. */
export function getStatistics(services: Services): OperationHandler<'getStatistics'> {
  return async (req, res) => {
    const body: Reply<'getStatistics', 200> = { requestId: req.requestId, statistics: await services.manifests.read(req.principal.appId) };
    sendJson(res, 200, body);
  };
}

/** PUT /api/v1/apps/statistics: replaces the manifest of the key's app. */
export function putStatistics(services: Services): OperationHandler<'putStatistics'> {
  return async (req, res) => {
    const { appId, appSlug, orgId, keyId } = req.principal;
    const statistics = await services.manifests.replace({ id: appId, slug: appSlug, orgId }, req.body, { kind: 'api_key', orgId, keyId });
    const body: Reply<'putStatistics', 200> = { requestId: req.requestId, statistics };
    sendJson(res, 200, body);
  };
}

import type { Reply } from '../../contract/types';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';

export function ping(): OperationHandler<'ping'> {
  return (req, res) => {
    const { orgId, appId, appSlug, appName } = req.principal;
    const body: Reply<'ping', 200> = { ok: true, organizationId: orgId, app: { id: appId, slug: appSlug, name: appName } };
    sendJson(res, 200, body);
  };
}

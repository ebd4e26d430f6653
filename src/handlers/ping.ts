import type { Request, Response } from 'express';
import type { components } from '../../generated/openapi';
import { sendJson } from '../http/respond';

type PingResponse = components['schemas']['PingResponse'];

export function ping(req: Request, res: Response): void {
  const { orgId, appId, appSlug, appName } = req.principal;
  const body: PingResponse = { ok: true, organizationId: orgId, app: { id: appId, slug: appSlug, name: appName } };
  sendJson(res, 200, body);
}

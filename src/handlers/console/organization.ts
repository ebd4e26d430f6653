import type { Schema } from '../../contract/types';
import * as administration from '../../domain/administration';
import { readAuditLog } from '../../domain/audit';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';
import type { Services } from '../../services';
import { actorOf } from './actor';

export function getOrganization(services: Services): OperationHandler<'getOrganization'> {
  return async (req, res) => {
    sendJson(res, 200, (await administration.organizationSummary(services.db, req.member.orgId)) satisfies Schema<'AdminOrganization'>);
  };
}

export function updateOrganization(services: Services): OperationHandler<'updateOrganization'> {
  return async (req, res) => {
    const organization = await administration.updateOrganization(services.db, req.member.orgId, req.body, actorOf(req));
    sendJson(res, 200, organization satisfies Schema<'AdminOrganization'>);
  };
}

export function listAuditLog(services: Services): OperationHandler<'listAuditLog'> {
  return async (req, res) => {
    const page = await readAuditLog(services.db.kysely, services.read.cursors, req.member.orgId, req.query.limit ?? 50, req.query.cursor);
    sendJson(res, 200, page satisfies Schema<'AuditLogPage'>);
  };
}

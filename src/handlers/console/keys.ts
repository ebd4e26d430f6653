import type { Schema } from '../../contract/types';
import * as administration from '../../domain/administration';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';
import type { Services } from '../../services';
import { actorOf } from './actor';

export function listKeys(services: Services): OperationHandler<'listKeys'> {
  return async (req, res) => {
    const items = await administration.listKeys(services.db, req.params.appId, actorOf(req));
    sendJson(res, 200, { items } satisfies Schema<'ApiKeyList'>);
  };
}

export function issueKey(services: Services): OperationHandler<'issueKey'> {
  return async (req, res) => {
    const issued = await administration.issueKey(services.db, req.params.appId, req.body.expiresAt, actorOf(req));
    sendJson(res, 201, issued satisfies Schema<'IssuedApiKey'>);
  };
}

export function revokeKey(services: Services): OperationHandler<'revokeKey'> {
  return async (req, res) => {
    const revoked = await administration.revokeKey(services.db, req.params.keyId, actorOf(req), req.params.appId);
    // This process stops accepting the key at once; other instances within AUTH_CACHE_TTL_SECONDS.
    services.authenticator.forgetKey(revoked.id);
    sendJson(res, 200, revoked satisfies Schema<'RevokedApiKey'>);
  };
}

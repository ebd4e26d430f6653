import type { Schema } from '../../contract/types';
import type { AppRecord } from '../../data/admin';
import * as administration from '../../domain/administration';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';
import type { Services } from '../../services';
import { actorOf } from './actor';

function appView({ orgId: _org, ...app }: AppRecord): Schema<'AdminApp'> {
  return app;
}

export function listApps(services: Services): OperationHandler<'listApps'> {
  return async (req, res) => {
    const apps = await administration.listApps(services.db, req.member.orgId);
    sendJson(res, 200, { items: apps.map(appView) } satisfies Schema<'AdminAppList'>);
  };
}

export function createApp(services: Services): OperationHandler<'createApp'> {
  return async (req, res) => {
    const { slug, name } = req.body;
    const app = await administration.createApp(services.db, { orgId: req.member.orgId, slug, name }, actorOf(req));
    sendJson(res, 201, appView(app));
  };
}

export function getApp(services: Services): OperationHandler<'getApp'> {
  return async (req, res) => {
    sendJson(res, 200, appView(await administration.requireApp(services.db.kysely, actorOf(req), req.params.appId)));
  };
}

export function putAllowedEventTypes(services: Services): OperationHandler<'putAllowedEventTypes'> {
  return async (req, res) => {
    const app = await administration.setAllowedEventTypes(services.db, req.params.appId, req.body.allowedEventTypes, actorOf(req));
    sendJson(res, 200, appView(app));
  };
}

/** The manifest of any app of the organization: the same answer as the app's own GET /api/v1/apps/statistics. */
export function getAppStatistics(services: Services): OperationHandler<'getAppStatistics'> {
  return async (req, res) => {
    const app = await administration.requireApp(services.db.kysely, actorOf(req), req.params.appId);
    const body: Schema<'StatisticsResponse'> = { requestId: req.requestId, statistics: await services.manifests.read(app.id) };
    sendJson(res, 200, body);
  };
}

/** Replaces the manifest through the same rules as the app's own PUT /api/v1/apps/statistics. */
export function putAppStatistics(services: Services): OperationHandler<'putAppStatistics'> {
  return async (req, res) => {
    const actor = actorOf(req);
    const app = await administration.requireApp(services.db.kysely, actor, req.params.appId);
    const statistics = await services.manifests.replace(app, req.body, actor);
    sendJson(res, 200, { requestId: req.requestId, statistics } satisfies Schema<'StatisticsResponse'>);
  };
}

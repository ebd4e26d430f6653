import type { Request, Response } from 'express';
import type { components } from '../../generated/openapi';
import { StatisticManifests } from '../domain/statistic-manifest';
import { sendJson } from '../http/respond';
import type { Services } from '../services';

type StatisticsResponse = components['schemas']['StatisticsResponse'];

/** GET and PUT /api/v1/apps/statistics: the manifest of the key's app. */
export function statisticsHandlers(services: Services) {
  const manifests = new StatisticManifests(services.db, services.validators);

  async function getStatistics(req: Request, res: Response): Promise<void> {
    const body: StatisticsResponse = { requestId: req.requestId, statistics: await manifests.read(req.principal.appId) };
    sendJson(res, 200, body);
  }

  async function putStatistics(req: Request, res: Response): Promise<void> {
    const { appId, appSlug } = req.principal;
    const statistics = await manifests.replace({ id: appId, slug: appSlug }, req.body);
    const body: StatisticsResponse = { requestId: req.requestId, statistics };
    sendJson(res, 200, body);
  }

  return { getStatistics, putStatistics };
}

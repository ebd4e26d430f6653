import { dailyStatistics, rollupStatistics, summaryReport } from '../../domain/rollup-read';
import type { OperationHandler } from '../../http/operation';
import { sendJson, streamJson } from '../../http/respond';
import { SeriesWrittenAhead, writeDailyStatistics } from './daily-statistics-json';
import type { Services } from '../../services';

/** GET /api/v1/console/statistics */
export function listRollupStatistics(services: Services): OperationHandler<'listRollupStatistics'> {
  return async (req, res) => {
    sendJson(res, 200, await rollupStatistics(services.read, req.member.orgId));
  };
}

/** GET /api/v1/console/statistics/daily */
export function getDailyStatistics(services: Services): OperationHandler<'getDailyStatistics'> {
  return async (req, res) => {
    const ahead = new SeriesWrittenAhead();
    const answer = await dailyStatistics(services.read, req.member.orgId, req.query, (...read) => ahead.add(...read));
    streamJson(res, 200, (out) => writeDailyStatistics(out, answer, ahead));
  };
}

/** GET /api/v1/console/reports/summary */
export function getSummaryReport(services: Services): OperationHandler<'getSummaryReport'> {
  return async (req, res) => {
    sendJson(res, 200, await summaryReport(services.read, req.member.orgId, req.query));
  };
}

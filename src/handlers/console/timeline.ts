import { once } from 'node:events';
import type { Response } from 'express';
import { timeline, timelineDay, timelineExport } from '../../domain/console-read';
import { csvHeader, exportContentType, exportFileName, exportRecord } from '../../domain/timeline-export';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';
import type { Services } from '../../services';

/** GET /api/v1/console/timeline */
export function listTimeline(services: Services): OperationHandler<'listTimeline'> {
  return async (req, res) => {
    sendJson(res, 200, await timeline(services.read, req.member.orgId, req.query));
  };
}

/** GET /api/v1/console/timeline/workers */
export function listTimelineWorkers(services: Services): OperationHandler<'listTimelineWorkers'> {
  return async (req, res) => {
    sendJson(res, 200, await timelineDay(services.read, req.member.orgId, req.query));
  };
}

/**
 * GET /api/v1/console/timeline/export: streamed a page of rows at a time; when
 * the client reads slower than the database, the next page waits for 'drain',
 * so memory holds about one page whatever the export's size.
 */
export function exportTimeline(services: Services): OperationHandler<'exportTimeline'> {
  return async (req, res) => {
    const { format = 'csv', ...filters } = req.query;
    const pages = timelineExport(services.read, req.member.orgId, filters);
    // The first page is read before the headers go out: a bad filter is still a clean 400.
    const first = await pages.next();
    res.status(200).type(exportContentType[format]);
    res.setHeader('Content-Disposition', `attachment; filename="${exportFileName(req.member.orgId, format, new Date())}"`);
    if (format === 'csv') await write(res, csvHeader);
    if (!first.done) {
      await write(res, first.value.map((row) => exportRecord(format, row)).join(''));
      for await (const rows of pages) {
        if (res.destroyed) return;
        await write(res, rows.map((row) => exportRecord(format, row)).join(''));
      }
    }
    res.end();
  };
}

async function write(res: Response, chunk: string): Promise<void> {
  if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
}

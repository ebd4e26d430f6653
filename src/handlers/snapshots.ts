import type { Request, Response } from 'express';
import type { components } from '../../generated/openapi';
import { ingestSnapshot } from '../domain/snapshot-ingest';
import { sendJson } from '../http/respond';
import type { Services } from '../services';

type SnapshotResponse = components['schemas']['SnapshotResponse'];

export function ingestSnapshots(services: Services) {
  return async (req: Request, res: Response): Promise<void> => {
    const stored = await ingestSnapshot(services.db, services.validate.snapshot, req.body, {
      principal: req.principal,
      requestId: req.requestId,
      receivedAt: new Date(),
      rawBody: req.rawBody,
    });
    const body: SnapshotResponse = { requestId: req.requestId, ok: true, ...stored };
    sendJson(res, 202, body);
  };
}

import type { Request, Response } from 'express';
import type { components } from '../../generated/openapi';
import type { WorkerRef } from '../data/workers';
import { ingestSnapshot } from '../domain/snapshot-ingest';
import { replyWithin, sendReply } from '../http/respond';
import type { Services } from '../services';

type SnapshotResponse = components['schemas']['SnapshotResponse'];

export function ingestSnapshots(services: Services) {
  return async (req: Request, res: Response): Promise<void> => {
    const ctx = { principal: req.principal, requestId: req.requestId, receivedAt: new Date(), rawBody: req.rawBody };
    const render = (stored: { snapshotType: string; worker: WorkerRef }) => {
      const body: SnapshotResponse = { requestId: req.requestId, ok: true, ...stored };
      return { status: 202, body: JSON.stringify(body) };
    };
    sendReply(res, await ingestSnapshot(services.db, services.validate.snapshot, req.body, ctx, replyWithin(req, render)));
  };
}

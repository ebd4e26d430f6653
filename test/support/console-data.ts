import type { Express } from 'express';
import type { Schema } from '../../src/contract/types';
import { client } from './client';

/** Sends events through the ingest API (202 expected) and returns their ids, in order. */
export async function ingest(app: Express, key: string, events: Partial<Schema<'IngestEvent'>>[]): Promise<string[]> {
  const body = {
    events: events.map((e) => ({ eventType: 'ticket.resolved', category: 'TASK_UPDATE', actor: { externalId: 'someone' }, ...e })),
  };
  const res = await client(app).post('/api/v1/ingest/events', { key, body });
  if (res.status !== 202) throw new Error(`ingest answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.results.accepted.map((a: { id: string }) => a.id);
}

/** Sends one snapshot through the ingest API (202 expected); returns the worker's id. */
export async function ingestSnapshot(app: Express, key: string, snapshot: Partial<Schema<'IngestSnapshot'>>): Promise<string> {
  const body = { snapshotType: 'oncall.load', actor: { externalId: 'someone' }, metrics: { open: 1 }, ...snapshot };
  const res = await client(app).post('/api/v1/ingest/snapshots', { key, body });
  if (res.status !== 202) throw new Error(`snapshot answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.worker.id;
}

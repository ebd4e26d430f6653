import type { Schema } from '../../src/contract/types';

let counter = 0;

/** A valid event (whitelisted by the default tenant) with overrides. */
export function event(overrides: Record<string, unknown> = {}): Schema<'IngestEvent'> {
  counter += 1;
  return {
    eventType: 'ticket.resolved',
    category: 'TASK_UPDATE',
    actor: { externalId: `user-${counter}` },
    timestamp: '2026-11-20T14:03:11+01:00',
    ...overrides,
  } as Schema<'IngestEvent'>;
}

/** A JSON value whose serialization is exactly `bytes` bytes long. */
export function metadataOfSize(bytes: number): Record<string, string> {
  const overhead = JSON.stringify({ pad: '' }).length;
  return { pad: 'x'.repeat(bytes - overhead) };
}

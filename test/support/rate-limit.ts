import assert from 'node:assert/strict';
import type { Express } from 'express';
import type { Response } from 'supertest';
import { client } from './client';

/** The per-key budget `perKey` of a fresh key is spent exactly: perKey answers 200 counting down, then 429. */
export async function spendKeyBudget(app: Express, key: string, perKey: number, perOrg: number): Promise<Response> {
  const api = client(app);
  for (let i = 1; i <= perKey; i++) {
    const res = await api.get('/api/v1/ingest/ping', { key });
    assert.equal(res.status, 200, `request ${i} of ${perKey} is admitted`);
    assert.equal(res.headers['x-ratelimit-limit'], String(perKey));
    assert.equal(res.headers['x-ratelimit-remaining'], String(perKey - i));
    assert.match(res.headers.ratelimit, new RegExp(`^"key";r=${perKey - i};t=1, "org";r=${perOrg - i};t=1$`));
  }
  const refused = await api.get('/api/v1/ingest/ping', { key });
  assertRateLimited(refused, 'this key');
  assert.equal(refused.headers['x-ratelimit-remaining'], '0');
  return refused;
}

/** A 429 rate_limited naming the limit hit, with a whole Retry-After of at least 1 and every rate-limit header. */
export function assertRateLimited(res: Response, limit: string): void {
  assert.equal(res.status, 429);
  assert.equal(res.body.error.code, 'rate_limited');
  assert.ok(res.body.error.message.includes(limit), `"${res.body.error.message}" names ${limit}`);
  assert.match(res.headers['retry-after'], /^[1-9]\d*$/);
  for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'ratelimit-policy', 'ratelimit']) {
    assert.ok(res.headers[header] !== undefined, `429 carries ${header}`);
  }
}

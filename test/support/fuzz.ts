import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import type { Express } from 'express';
import fc from 'fast-check';
import { statusOf, type ErrorCode } from '../../src/errors';
import { assertContract } from './contract';
import { sendBytes, type BytesResponse } from './http-bytes';

function integerFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw)) throw new Error(`${name} must be an integer, got "${raw}"`);
  return Number(raw);
}

/** FUZZ_RUNS cases per property, from FUZZ_SEED or a fresh seed printed at the start so that any run can be replayed. */
export const fuzzRuns = integerFromEnv('FUZZ_RUNS', 2000);
export const fuzzSeed = integerFromEnv('FUZZ_SEED', randomInt(2 ** 31));

/**
 * fast-check parameters: seeded, and on failure the seed, the path and every
 * failing case are printed. Shrinking a case of 1 MB bodies can take longer
 * than the search itself: after two minutes the smallest case so far is
 * reported.
 */
export const fuzzParameters: fc.Parameters<unknown> = {
  numRuns: fuzzRuns,
  seed: fuzzSeed,
  verbose: fc.VerbosityLevel.Verbose,
  plugins: [fc.interruptAfterTimeLimit(120_000, { failOnInterrupt: true })],
};

export interface FuzzRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  path: string;
  authorization?: string;
  body?: Buffer;
  contentType?: string;
  gzip?: boolean;
  chunked?: boolean;
  headers?: Record<string, string>;
}

/** The app on a real socket, reused over keep-alive connections so that thousands of cases stay fast. */
export class FuzzTarget {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  private constructor(private readonly server: Server) {}

  static async start(app: Express): Promise<FuzzTarget> {
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return new FuzzTarget(server);
  }

  /**
   * Sends the request and checks what holds for every answer: no 5xx, valid
   * against the contract, an error code whose status is the one answered, and
   * no prototype polluted.
   */
  async send(request: FuzzRequest): Promise<BytesResponse> {
    const headers: Record<string, string> = { ...request.headers };
    if (request.authorization !== undefined) headers.Authorization = request.authorization;
    if (request.contentType) headers['Content-Type'] = request.contentType;
    let body = request.body;
    if (body && request.gzip) {
      body = zlib.gzipSync(body);
      headers['Content-Encoding'] = 'gzip';
    }
    const { port } = this.server.address() as AddressInfo;
    const res = await sendBytes(port, { method: request.method, path: request.path, headers, body, chunked: request.chunked }, this.agent);
    assert.ok(res.status < 500, `answered ${res.status}: ${res.text.slice(0, 2000)}`);
    // The app runs in this process: a "__proto__" key that reached a prototype would show here.
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false, 'Object.prototype is untouched');
    assertContract(res, { method: request.method, path: request.path.split('?')[0] as string });
    if (res.status >= 400) {
      const code = (res.body.error as { code: ErrorCode }).code;
      assert.equal(res.status, statusOf(code), `${code} is answered with its own status`);
    }
    return res;
  }

  async close(): Promise<void> {
    this.agent.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export function assertError(res: BytesResponse, status: number, codes: ErrorCode[]): void {
  assert.equal(res.status, status, res.text.slice(0, 2000));
  assert.ok(codes.includes((res.body.error as { code: ErrorCode }).code), res.text.slice(0, 2000));
}

/** The body as the service reads it: UTF-8 (invalid bytes become U+FFFD), then JSON. */
export function parseLikeServer(bytes: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(bytes.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** How deep arrays and objects nest in a parsed JSON value (a scalar is 0), and whether all its numbers are finite; without recursion. */
export function shapeOf(value: unknown): { depth: number; finite: boolean } {
  let depth = 0;
  let finite = true;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length) {
    const [node, level] = pending.pop() as [unknown, number];
    if (typeof node === 'number') finite &&= Number.isFinite(node);
    if (typeof node !== 'object' || node === null) continue;
    depth = Math.max(depth, level + 1);
    for (const child of Object.values(node)) pending.push([child, level + 1]);
  }
  return { depth, finite };
}

/** The same JSON value, whatever object it came from (a sent -0 arrives as 0, as JSON has it). */
export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Stored JSON text holds the value sent: nothing lost or changed on the way (a non-finite number would come back as null). */
export function assertStoredAsSent(stored: string | null, sent: unknown, what: string): void {
  const faithful = (value: unknown) =>
    JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? `non-finite number ${v}` : v));
  assert.equal(
    stored === null ? undefined : faithful(JSON.parse(stored)),
    sent === undefined ? undefined : faithful(sent),
    `${what} is stored as sent`,
  );
}

/** Header values as a client can send them: visible Latin-1, with the lengths a schema's bounds name. */
export function headerValues(bounds: { minLength?: number; maxLength?: number }): fc.Arbitrary<string> {
  const unit = fc
    .oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
    .map((code) => String.fromCharCode(code));
  const lengths = [bounds.minLength ?? 0, bounds.maxLength, (bounds.maxLength ?? 0) + 1, (bounds.minLength ?? 1) - 1].filter(
    (n): n is number => n !== undefined && n >= 0,
  );
  return fc.oneof(
    fc.string({ unit, minLength: 1, maxLength: 40 }),
    fc.constantFrom(...lengths).map((n) => 'k'.repeat(n)),
  );
}

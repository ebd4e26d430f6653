// The load generator, run in its own process (forked by run.ts): autocannon over
// keep-alive connections, a warm-up, then the measured run. Talks to its parent by IPC:
// { type: 'measuring', at } when the measured run starts, then { type: 'result', result }.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  path: string;
  bodiesFile: string;
  authorization?: string;
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
  /** Requests per second over all connections; as fast as they can by default. */
  overallRate?: number;
}

export interface LoadResult {
  seconds: number;
  requests: number;
  statusCounts: Record<string, number>;
  /** Status counts of the warm-up, which the service also stored. */
  warmupStatusCounts: Record<string, number>;
  errors: number;
  timeouts: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] as string) as LoadOptions;
  const bodies = JSON.parse(readFileSync(options.bodiesFile, 'utf8')) as string[];
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.authorization) headers.authorization = options.authorization;
  // No setupRequest: autocannon builds each request once and every connection cycles through them all.
  const requests = bodies.map((body) => ({ method: 'POST', path: options.path, body }));
  const base = { url: options.url, connections: options.connections, headers, requests, timeout: 10, overallRate: options.overallRate };

  const counts = (r: autocannon.Result) => Object.fromEntries(Object.entries(r.statusCodeStats).map(([status, s]) => [status, Number(s.count)]));
  const warmup = options.warmupSeconds > 0 ? counts(await autocannon({ ...base, duration: options.warmupSeconds })) : {};
  send({ type: 'measuring', at: (process.hrtime.bigint() / 1000n).toString() });
  const r = await autocannon({ ...base, duration: options.durationSeconds });
  const result: LoadResult = {
    seconds: (r.finish.getTime() - r.start.getTime()) / 1000,
    requests: r.requests.total,
    statusCounts: counts(r),
    warmupStatusCounts: warmup,
    errors: r.errors,
    timeouts: r.timeouts,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max, mean: r.latency.mean },
  };
  send({ type: 'result', result });
}

function send(message: unknown): void {
  if (process.send) process.send(message);
  else process.stdout.write(JSON.stringify(message) + '\n');
}

main().then(
  () => process.disconnect?.(),
  (err) => {
    process.stderr.write(`load generator failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);

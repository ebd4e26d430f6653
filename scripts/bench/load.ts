// The load generator, run in its own process (forked by run.ts): one autocannon run over
// keep-alive connections, its first warmupSeconds the warm-up, the rest measured (load-record.ts says
// why one run). Talks to its parent by IPC: { type: 'measuring', at } when the measured run starts,
// then { type: 'result', result }.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { sendToParent } from './ipc';
import { LoadRecord } from './load-record';

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

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] as string) as LoadOptions;
  const bodies = JSON.parse(readFileSync(options.bodiesFile, 'utf8')) as string[];
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.authorization) headers.authorization = options.authorization;
  // No setupRequest: autocannon builds each request once and every connection cycles through them all.
  const requests = bodies.map((body) => ({ method: 'POST', path: options.path, body }));
  const base = { url: options.url, connections: options.connections, headers, requests, timeout: 10, overallRate: options.overallRate };

  const record = new LoadRecord();
  const run = autocannon({ ...base, duration: options.warmupSeconds + options.durationSeconds });
  run.on('response', (_client, statusCode, _bytes, responseTime) => record.response(statusCode, responseTime));
  // Set once autocannon has built its connections, as its own clock for the run's duration is.
  setTimeout(() => {
    record.startMeasuring(performance.now());
    void sendToParent({ type: 'measuring', at: (process.hrtime.bigint() / 1000n).toString() });
  }, options.warmupSeconds * 1000);
  const whole = await run;
  const result = record.result(performance.now(), whole);
  await sendToParent({ type: 'result', result });
}

main().then(
  () => process.disconnect?.(),
  (err) => {
    process.stderr.write(`load generator failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);

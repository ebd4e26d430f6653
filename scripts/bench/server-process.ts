// Starting and stopping the built server as a child process, for the benchmark and the soak.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { projectRoot } from '../../src/paths';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function stopChild(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

async function waitFor(url: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before it was ready; log:\n${readFileSync(logFile, 'utf8')}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not ready within 30 s`);
}

export interface Running {
  child: ChildProcess;
  port: number;
  logFile: string;
  stop(): Promise<void>;
}

/** `node dist/src/server.js` (as `make run` starts it) on a free port, its output in `logDir`, ready once /healthz answers. */
export async function startBuiltServer(options: { env: Record<string, string | undefined>; logDir: string; label: string; nodeArgs?: string[] }): Promise<Running> {
  const port = await freePort();
  const logFile = path.join(options.logDir, `server-${options.label}-${port}.log`);
  const out = createWriteStream(logFile);
  const env = { ...options.env, PORT: String(port) };
  const args = [...(options.nodeArgs ?? []), path.join(projectRoot, 'dist', 'src', 'server.js')];
  const child = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  await waitFor(`http://127.0.0.1:${port}/healthz`, child, logFile);
  return { child, port, logFile, stop: () => stopChild(child) };
}

/** Runs `bin/ingestctl --json ARGS` on the given database and returns its one JSON object. */
export function ingestctl(databaseUrl: string, args: string[]): Record<string, unknown> {
  const out = execFileSync(process.execPath, [path.join(projectRoot, 'bin', 'ingestctl'), '--json', ...args], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  return JSON.parse(out) as Record<string, unknown>;
}

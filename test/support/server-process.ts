import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  exited: Promise<number | null>;
}

/** Starts src/server.ts as a real process on a free port and resolves once it listens. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, '..', '..', 'src', 'server.ts')], {
    // Info level: the line announcing the port is how we know it listens.
    env: { ...process.env, PORT: '0', ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk) => {
      seen += String(chunk);
      const match = /"port":(\d+)/.exec(seen);
      if (match) resolve(Number(match[1]));
    });
    let errors = '';
    child.stderr?.on('data', (chunk) => (errors += String(chunk)));
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening: ${errors}`)));
  });
  child.stdout?.resume();
  return { child, port, exited };
}

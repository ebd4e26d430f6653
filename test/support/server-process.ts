import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  exited: Promise<number | null>;
  /** The lines the service logged at error level or above, for the message of a failed assertion. */
  errorLines: string[];
}

const root = path.join(__dirname, '..', '..');

/**
 * Starts the service as a real process on a free port and resolves once it listens: src/server.ts
 * through tsx, or with `built` the compiled dist/src/server.js that `make build` makes (it serves the console).
 */
export async function startServer(env: Record<string, string>, options: { built?: boolean } = {}): Promise<ServerProcess> {
  const entry = options.built
    ? [path.join(root, 'dist', 'src', 'server.js')]
    : ['--require', 'tsx/cjs', path.join(root, 'src', 'server.ts')];
  const child = spawn(process.execPath, entry, {
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
  const errorLines: string[] = [];
  let partial = '';
  child.stdout?.on('data', (chunk) => {
    const lines = (partial + String(chunk)).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (/"level":(50|60)/.test(line)) errorLines.push(line.slice(0, 2000));
  });
  return { child, port, exited, errorLines };
}

// What every benchmark run owns: a temp folder, the child processes it started and the
// clean-ups it registered, all released at the end, on failure and on Ctrl-C alike.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Harness {
  tmp: string;
  cleanups: (() => Promise<void> | void)[];
  /** A child process to kill if the run ends before it does. */
  track<C extends ChildProcess>(child: C): C;
  /** A progress line on stderr, with the seconds since the run started. */
  log(message: string): void;
  elapsedSeconds(): number;
  /** Runs `main`, then cleans up; a failure is printed and exits 1, Ctrl-C exits 130. */
  run(main: () => Promise<void>): void;
}

export function harness(name: string): Harness {
  const started = performance.now();
  const tmp = mkdtempSync(path.join(os.tmpdir(), `ingest-${name}-`));
  const cleanups: (() => Promise<void> | void)[] = [];
  const children = new Set<ChildProcess>();
  const elapsedSeconds = () => (performance.now() - started) / 1000;
  const log = (message: string) => process.stderr.write(`[${name} ${elapsedSeconds().toFixed(0).padStart(4)}s] ${message}\n`);
  const cleanUp = async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  };
  return {
    tmp,
    cleanups,
    log,
    elapsedSeconds,
    track(child) {
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    },
    run(main) {
      process.once('SIGINT', () => {
        log('interrupted: cleaning up');
        void cleanUp().then(() => process.exit(130));
      });
      main().then(
        () => cleanUp(),
        async (err) => {
          process.stderr.write(`${name} failed: ${err instanceof Error ? err.stack : String(err)}\n`);
          await cleanUp();
          process.exit(1);
        },
      );
    },
  };
}

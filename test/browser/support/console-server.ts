import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config';
import { migrate, openDatabase, type Db } from '../../../src/data/db';
import { startServer, type ServerProcess } from '../../support/server-process';

const root = path.join(__dirname, '..', '..', '..');

/** The built service (dist/, with the console in dist/web) on a fresh SQLite file, and that database opened here for seeding; `seed` runs before the server starts. */
export async function startConsoleServer(
  env: Record<string, string> = {},
  options: { seed?: (vars: Record<string, string>) => void } = {},
) {
  assert.ok(existsSync(path.join(root, 'dist', 'web', 'index.html')), 'the console is not built: run `make build` first');
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'console-browser-')), 'ingest.db');
  const vars = { DATABASE_URL: `sqlite:${file}`, AUTH_CACHE_TTL_SECONDS: '0', ...env };
  const db: Db = openDatabase(loadConfig(vars).database);
  await migrate(db);
  // Filled before the server starts (ingestctl demo, say): a second writer would meet a locked database.
  options.seed?.(vars);
  const server: ServerProcess = await startServer(vars, { built: true });
  const baseUrl = `http://127.0.0.1:${server.port}`;
  return {
    db,
    env: vars,
    baseUrl,
    async stop() {
      server.child.kill('SIGTERM');
      await server.exited;
      await db.close();
    },
  };
}

/** A call to the ingest API with an app's key, as the app's own system would make it. */
export async function ingest(baseUrl: string, key: string, path: string, body?: unknown, method = 'POST') {
  const res = await fetch(`${baseUrl}${path}`, {
    method: body === undefined ? 'GET' : method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

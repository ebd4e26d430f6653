import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { runIngestctl } from '../src/cli/ingestctl';
import { openDatabase } from '../src/data/db';
import { freshDatabaseConfig, testDialect } from './support/database';
import { databaseUrlOf } from './support/fixtures';
import { startServer, type ServerProcess } from './support/server-process';

const ROUNDS = 3;
const SENDERS = 6;
const EVENTS_PER_BATCH = 20;

interface Batch {
  id: string;
  body: string;
  outcome?: { status: number; acceptedIds: string[] };
}

function makeBatch(): Batch {
  const id = randomUUID();
  const events = Array.from({ length: EVENTS_PER_BATCH }, (_, i) => ({
    eventType: 'ticket.resolved',
    category: 'TASK_UPDATE',
    actor: { externalId: `crash-${Math.floor(Math.random() * 50)}` },
    timestamp: new Date().toISOString(),
    metadata: { batch: id, position: i },
  }));
  return { id, body: JSON.stringify({ events }) };
}

/** One attempt: the answer, or undefined when the connection died without one. */
async function send(
  port: number,
  key: string,
  batch: Batch,
): Promise<{ status: number; body: { results?: { accepted: Array<{ id: string }> } } } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/ingest/events`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': batch.id },
      body: batch.body,
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, body: await res.json() };
  } catch {
    return undefined;
  }
}

/** Retries with the batch's key until it has a final answer (409: the killed request's claim is still leased). */
async function settle(port: number, key: string, batch: Batch): Promise<void> {
  for (let attempt = 0; attempt < 120 && !batch.outcome; attempt++) {
    const res = await send(port, key, batch);
    if (res && res.status !== 409) {
      batch.outcome = { status: res.status, acceptedIds: res.body.results?.accepted.map((a) => a.id) ?? [] };
    } else {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

describe(`Crash safety (${testDialect})`, () => {
  it('keeps every acknowledged event exactly once, and every retried batch whole and exactly once, across SIGKILLs', async function () {
    this.timeout(240_000);
    const dbConfig = await freshDatabaseConfig();
    const env = { DATABASE_URL: databaseUrlOf(dbConfig), RATE_LIMIT_PER_KEY: '100000', RATE_LIMIT_PER_ORG: '100000' };
    let out = '';
    await runIngestctl(['quickstart', '--json'], { env, out: (t) => (out += t), err: () => {} });
    const { key, organizationId } = JSON.parse(out) as { key: string; organizationId: string };

    const batches: Batch[] = [];
    const errorLines: string[] = [];
    let server: ServerProcess = await startServer(env);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        let killed = false;
        const killAfterMs = 200 + Math.floor(Math.random() * 600);
        const senders = Array.from({ length: SENDERS }, async () => {
          while (!killed) {
            const batch = makeBatch();
            batches.push(batch);
            const res = await send(server.port, key, batch);
            if (res) batch.outcome = { status: res.status, acceptedIds: res.body.results?.accepted.map((a) => a.id) ?? [] };
          }
        });
        await new Promise((resolve) => setTimeout(resolve, killAfterMs));
        killed = true;
        server.child.kill('SIGKILL');
        await server.exited;
        errorLines.push(...server.errorLines);
        await Promise.all(senders);
        server = await startServer(env);
        // An answered request that is not final (409) is retried like an unanswered one.
        for (const batch of batches) if (batch.outcome?.status === 409) batch.outcome = undefined;
        await Promise.all(batches.filter((b) => !b.outcome).map((b) => settle(server.port, key, b)));
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      errorLines.push(...server.errorLines);
    }

    const unanswered = batches.filter((b) => !b.outcome);
    assert.deepEqual(
      unanswered.map((b) => b.id),
      [],
      'every batch got a final answer after retries',
    );
    for (const batch of batches) {
      assert.equal(
        batch.outcome?.status,
        202,
        `batch ${batch.id} answered ${batch.outcome?.status}; the service logged:\n${errorLines.join('\n')}`,
      );
    }

    const db = openDatabase(dbConfig);
    try {
      const rows = await db.kysely
        .selectFrom('events')
        .select(['id', 'metadata', 'worker_id'])
        .where('org_id', '=', organizationId)
        .execute();
      const perBatch = new Map<string, number>();
      for (const row of rows) {
        const batch = (JSON.parse(row.metadata as string) as { batch: string }).batch;
        perBatch.set(batch, (perBatch.get(batch) ?? 0) + 1);
      }
      for (const batch of batches)
        assert.equal(perBatch.get(batch.id), EVENTS_PER_BATCH, `batch ${batch.id} is stored whole, exactly once`);
      assert.equal(rows.length, batches.length * EVENTS_PER_BATCH, 'nothing but the batches was stored');
      const ids = new Set(rows.map((r) => r.id));
      for (const batch of batches)
        for (const id of batch.outcome?.acceptedIds ?? []) assert.ok(ids.has(id), `acknowledged event ${id} was kept`);

      const workers = await db.kysely.selectFrom('workers').select('id').where('org_id', '=', organizationId).execute();
      const withEvents = new Set(rows.map((r) => r.worker_id));
      assert.ok(workers.length <= 50);
      for (const worker of workers) assert.ok(withEvents.has(worker.id), `worker ${worker.id} was not left behind by a rolled-back batch`);
      const pending = await db.kysely.selectFrom('idempotency_records').select('state').where('state', '=', 'in_progress').execute();
      assert.equal(pending.length, 0, 'no claim is left in progress');
      process.stdout.write(`      ${batches.length} batches over ${ROUNDS} kills, ${rows.length} events stored\n`);
    } finally {
      await db.close();
    }
  });
});

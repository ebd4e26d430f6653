// Straight through the drivers, no HTTP and no service code: the raw storage ceiling
// (the same event rows, 100 per transaction, into the tables and indexes the
// migrations create) and the bulk load that fills a database for the growth run.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Db } from '../../src/data/db';
import { openSqlite } from '../../src/data/sqlite';
import { newId, nowIso, newIds } from '../../src/data/ids';
import { eventColumns, externalIdOf, type EventTuple, type RowTemplate } from './workload';

export interface RawScope {
  orgId: string;
  appId: string;
  integrationId: string;
  /** Worker ids, indexed by the workload's worker number. */
  workerIds: string[];
}

export interface RawResult {
  events: number;
  seconds: number;
  eventsPerSecond: number;
  transactions: number;
}

/** One events row as the service stores it, in the column order of `eventColumns`. */
function tuple(id: string, workerId: string, t: RowTemplate, ts: string, requestId: string, receivedAt: string, scope: RawScope): EventTuple {
  return [id, scope.orgId, scope.appId, workerId, scope.integrationId, 'event', t.eventType, t.category, ts, t.duration, null, null, t.metadata, null, requestId, receivedAt, null];
}

function tuples(batch: RowTemplate[], scope: RawScope): EventTuple[] {
  // What the service computes per batch and per event: ids, the request id, the receipt time.
  const requestId = newId('req');
  const receivedAt = nowIso();
  const ids = newIds('evt', batch.length);
  return batch.map((t, i) => tuple(ids[i] as string, scope.workerIds[t.worker % scope.workerIds.length] as string, t, t.ts, requestId, receivedAt, scope));
}

const insertSql = `insert into events (${eventColumns.join(', ')}) values (${eventColumns.map(() => '?').join(', ')})`;

/** better-sqlite3: one prepared single-row INSERT, run once per row inside one transaction per batch. */
export async function rawSqlite(path: string, batches: RowTemplate[][], scope: RawScope, seconds: number): Promise<RawResult> {
  // The service's own connection settings, background checkpoints included.
  const { connection: sqlite, stopCheckpoints } = openSqlite(path);
  try {
    const insert = sqlite.prepare(insertSql);
    const insertBatch = sqlite.transaction((rows: EventTuple[]) => {
      for (const row of rows) insert.run(row);
    });
    const started = performance.now();
    const deadline = started + seconds * 1000;
    let events = 0;
    let transactions = 0;
    while (performance.now() < deadline) {
      const rows = tuples(batches[transactions % batches.length] as RowTemplate[], scope);
      insertBatch(rows);
      events += rows.length;
      transactions++;
    }
    const elapsed = (performance.now() - started) / 1000;
    return { events, seconds: elapsed, eventsPerSecond: Math.round(events / elapsed), transactions };
  } finally {
    await stopCheckpoints();
    sqlite.close();
  }
}

function valuesList(rows: number, columns: number): string {
  const list: string[] = [];
  for (let r = 0; r < rows; r++) {
    list.push(`(${Array.from({ length: columns }, (_, c) => `$${r * columns + c + 1}`).join(', ')})`);
  }
  return list.join(', ');
}

/**
 * pg: `connections` clients in parallel (the service's pool has 10), each sending one
 * prepared multi-row INSERT ... VALUES per batch: one statement, hence one transaction
 * (autocommit) of 100 rows, and one round trip.
 */
export async function rawPostgres(
  url: string,
  batches: RowTemplate[][],
  scope: RawScope,
  seconds: number,
  connections: number,
  around: { connected(): Promise<void>; done(): Promise<void> } = { connected: async () => {}, done: async () => {} },
): Promise<RawResult> {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = new Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  try {
    await around.connected();
    const started = performance.now();
    const deadline = started + seconds * 1000;
    let events = 0;
    let transactions = 0;
    let next = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) {
          const rows = tuples(batches[next++ % batches.length] as RowTemplate[], scope);
          await client.query({
            name: `bench_insert_${rows.length}`,
            text: `insert into events (${eventColumns.join(', ')}) values ${valuesList(rows.length, eventColumns.length)}`,
            values: rows.flat(),
          });
          events += rows.length;
          transactions++;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    await around.done();
    return { events, seconds: elapsed, eventsPerSecond: Math.round(events / elapsed), transactions };
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

/**
 * The app's workers for the workload's externalIds, as the service would have created
 * them (linked to the app's connection); creates those that do not exist yet.
 */
export async function ensureWorkers(db: Db, appId: string, workers: number): Promise<RawScope> {
  const k = db.kysely;
  const connection = await k.selectFrom('connections').select(['id', 'org_id', 'integration_id']).where('app_id', '=', appId).executeTakeFirstOrThrow();
  const links = await k.selectFrom('worker_external_ids').select(['external_id', 'worker_id']).where('app_id', '=', appId).execute();
  const byExternalId = new Map(links.map((l) => [l.external_id, l.worker_id]));
  const workerIds: string[] = [];
  const missing: { worker: number; id: string }[] = [];
  for (let w = 0; w < workers; w++) {
    const existing = byExternalId.get(externalIdOf(w));
    if (existing) workerIds.push(existing);
    else {
      const id = newId('wkr');
      workerIds.push(id);
      missing.push({ worker: w, id });
    }
  }
  const createdAt = nowIso();
  for (let i = 0; i < missing.length; i += 200) {
    const chunk = missing.slice(i, i + 200);
    await k.transaction().execute(async (trx) => {
      await trx
        .insertInto('workers')
        .values(chunk.map((m) => ({ id: m.id, org_id: connection.org_id, display_name: externalIdOf(m.worker), display_name_lower: externalIdOf(m.worker), email: null, email_lower: null, connection_id: connection.id, created_at: createdAt })))
        .execute();
      await trx
        .insertInto('worker_external_ids')
        .values(chunk.map((m) => ({ app_id: appId, external_id: externalIdOf(m.worker), external_id_lower: externalIdOf(m.worker), worker_id: m.id, created_at: createdAt })))
        .execute();
    });
  }
  return { orgId: connection.org_id, appId, integrationId: connection.integration_id, workerIds };
}

/**
 * Rows for the bulk load: the workload's event shapes over the same workers, with
 * timestamps spread evenly (ascending, jittered) over the `days` before now, and
 * time-ordered ids as newId() makes them, stamped with their own timestamp.
 */
function* bulkRows(count: number, batches: RowTemplate[][], scope: RawScope, days: number): Generator<EventTuple[]> {
  const templates = batches.flat();
  const end = Date.now() - 60_000;
  const start = end - days * 86_400_000;
  const step = (end - start) / count;
  const CHUNK = 5000;
  let seed = 1;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  for (let done = 0; done < count; done += CHUNK) {
    const n = Math.min(CHUNK, count - done);
    const suffixes = randomBytes(9 * n).toString('base64url');
    const rows: EventTuple[] = [];
    let requestId = '';
    for (let i = 0; i < n; i++) {
      const index = done + i;
      const ms = Math.floor(start + index * step + random() * step);
      const iso = new Date(ms).toISOString();
      if (index % 100 === 0) requestId = `req_${ms.toString(36).padStart(9, '0')}${suffixes.slice(i * 12, i * 12 + 12)}`;
      const t = templates[index % templates.length] as RowTemplate;
      const id = `evt_${ms.toString(36).padStart(9, '0')}${suffixes.slice(i * 12, i * 12 + 12)}`;
      rows.push(tuple(id, scope.workerIds[Math.floor(random() * scope.workerIds.length)] as string, t, iso, requestId, iso, scope));
    }
    yield rows;
  }
}

/**
 * Fills `events` up to `target` rows. The two secondary indexes are dropped for the
 * load and recreated from their own stored definitions, so the schema ends up as the
 * migrations made it.
 */
export async function bulkLoadSqlite(path: string, target: number, batches: RowTemplate[][], scope: RawScope, days: number): Promise<{ loaded: number; seconds: number }> {
  const started = performance.now();
  const { connection: sqlite, stopCheckpoints } = openSqlite(path);
  try {
    const have = (sqlite.prepare('select count(*) as n from events').get() as { n: number }).n;
    const need = Math.max(0, target - have);
    if (need === 0) return { loaded: 0, seconds: 0 };
    const indexes = sqlite.prepare(`select name, sql from sqlite_master where type = 'index' and tbl_name = 'events' and sql is not null`).all() as { name: string; sql: string }[];
    for (const index of indexes) sqlite.exec(`drop index "${index.name}"`);
    const insert = sqlite.prepare(insertSql);
    const load = sqlite.transaction((rows: EventTuple[]) => {
      for (const row of rows) insert.run(row);
    });
    for (const rows of bulkRows(need, batches, scope, days)) load(rows);
    for (const index of indexes) sqlite.exec(index.sql);
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    return { loaded: need, seconds: (performance.now() - started) / 1000 };
  } finally {
    await stopCheckpoints();
    sqlite.close();
  }
}

export async function bulkLoadPostgres(url: string, target: number, batches: RowTemplate[][], scope: RawScope, days: number): Promise<{ loaded: number; seconds: number }> {
  const started = performance.now();
  const admin = new Client({ connectionString: url });
  await admin.connect();
  try {
    const have = Number((await admin.query<{ n: string }>('select count(*) as n from events')).rows[0]?.n ?? 0);
    const need = Math.max(0, target - have);
    if (need === 0) return { loaded: 0, seconds: 0 };
    const indexes = (
      await admin.query<{ indexname: string; indexdef: string }>(
        // The secondary indexes; the primary key's (unique) stays.
        `select indexname, indexdef from pg_indexes
          where schemaname = current_schema() and tablename = 'events' and indexdef not like 'CREATE UNIQUE %'`,
      )
    ).rows;
    for (const index of indexes) await admin.query(`drop index "${index.indexname}"`);

    const text = `insert into events (${eventColumns.join(', ')})
      select id, $9, $10, worker_id, $11, 'event', event_type, category, ts, duration, null, null, metadata, null, request_id, ts, null
        from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[])
          as r(id, worker_id, event_type, category, ts, duration, metadata, request_id)`;
    const loaders = await Promise.all(
      [0, 1].map(async () => {
        const c = new Client({ connectionString: url });
        await c.connect();
        return c;
      }),
    );
    const chunks = bulkRows(need, batches, scope, days);
    await Promise.all(
      loaders.map(async (client) => {
        for (let next = chunks.next(); !next.done; next = chunks.next()) {
          const rows = next.value;
          const column = (i: number) => rows.map((r) => r[i]);
          await client.query(text, [column(0), column(3), column(6), column(7), column(8), column(9), column(12), column(14), scope.orgId, scope.appId, scope.integrationId]);
        }
        await client.end();
      }),
    );
    for (const index of indexes) await admin.query(index.indexdef);
    // Autovacuum would analyze the table soon after such a load; do it now so plans are settled.
    await admin.query('vacuum analyze events');
    // As SQLite's load ends with its checkpoint: the load's pages are written now, not by a checkpoint inside
    // the run measured next (which took a growth run to 0.74× of an empty store, and a request to 1,011.6 ms).
    await admin.query('checkpoint');
    return { loaded: need, seconds: (performance.now() - started) / 1000 };
  } finally {
    await admin.end();
  }
}

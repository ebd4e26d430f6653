import assert from 'node:assert/strict';
import path from 'node:path';
import { createApp } from '../src/app';
import { WriterThread } from '../src/data/writer';
import type { WriteJobTable } from '../src/domain/writes';
import { createServices } from '../src/services';
import { client } from './support/client';
import { testDialect } from './support/database';
import { event } from './support/events';
import { setup, silentLogger } from './support/fixtures';

const EVENTS = '/api/v1/ingest/events';

// On SQLite only: PostgreSQL takes writes from every connection, with no writer thread.
(testDialect === 'sqlite' ? describe : describe.skip)('SQLite writer thread', () => {
  it('commits batches in its own thread: the events, the reply and the rollups outbox row', async () => {
    const { app, db, tenant } = await setup();
    assert.ok(db.writer, 'a SQLite file has a writer thread');
    const res = await client(app).post(EVENTS, {
      key: tenant.key,
      headers: { 'Idempotency-Key': 'w-1' },
      body: { events: [event(), event()] },
    });
    assert.equal(res.status, 202);
    const stored = await db.kysely.selectFrom('events').select('id').where('org_id', '=', tenant.orgId).execute();
    assert.equal(stored.length, 2);
    const outbox = await db.kysely.selectFrom('rollup_outbox').select('id').where('org_id', '=', tenant.orgId).execute();
    assert.equal(outbox.length, 1);
    const record = await db.kysely
      .selectFrom('idempotency_records')
      .select(['state', 'body'])
      .where('api_key_id', '=', tenant.keyId)
      .executeTakeFirst();
    assert.deepEqual(record, { state: 'done', body: res.text });
  });

  it('dying, rejects every pending batch with 503 (nothing of them stored, their keys free), and the next batch gets a new thread', async function () {
    this.timeout(30_000);
    const { db, config, tenant } = await setup();
    if (config.database.kind !== 'sqlite') throw new Error('a SQLite test');
    const writer = new WriterThread<WriteJobTable>(path.join(__dirname, 'support', 'dying-writer.ts'), path.resolve(config.database.path));
    const dyingDb = { ...db, writer };
    const services = createServices(config, dyingDb, { logger: silentLogger });
    const api = client(createApp(config, dyingDb, { logger: silentLogger, services }));
    try {
      const stored = async (marker: string) =>
        (await db.kysely.selectFrom('events').select('metadata').where('org_id', '=', tenant.orgId).execute()).filter((e) =>
          e.metadata?.includes(`"${marker}"`),
        ).length;
      const markers = ['a', 'b', 'c', 'd'];
      const bodies = new Map(
        markers.map((marker) => [marker, { events: [event({ metadata: { marker } }), event({ metadata: { marker } })] }]),
      );
      const send = (marker: string) =>
        api.post(EVENTS, { key: tenant.key, headers: { 'Idempotency-Key': marker }, body: bodies.get(marker) });
      const dying = api.post(EVENTS, { key: tenant.key, body: { events: [event({ metadata: { marker: 'dying', dieInWriter: true } })] } });
      // Posted while the dying batch is in the thread.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const waiting = await Promise.all(markers.map(send));

      const died = await dying;
      assert.equal(died.status, 503);
      assert.equal(died.body.error.code, 'service_unavailable');
      assert.equal(died.headers['retry-after'], '1');
      assert.equal(await stored('dying'), 0, 'the dying batch was rolled back with the thread');
      for (const [i, res] of waiting.entries()) {
        assert.equal(res.status, 503, `batch ${markers[i]} was pending when the thread died`);
        assert.equal(res.body.error.code, 'service_unavailable');
        assert.equal(await stored(markers[i] as string), 0);
      }

      // Retried with their keys (freed, not replaying the 503), each is stored once, by a new thread.
      for (const m of markers) {
        const retried = await send(m);
        assert.equal(retried.status, 202);
        assert.equal(retried.headers['idempotent-replayed'], undefined);
        assert.equal(await stored(m), 2);
      }
    } finally {
      await services.close();
      await writer.close();
    }
  });
});

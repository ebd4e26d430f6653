import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createApp } from '../src/app';
import { migrate, openDatabase, type Db } from '../src/data/db';
import { createServices } from '../src/services';
import { client } from './support/client';
import { freshDatabaseConfig, testDialect } from './support/database';
import { createTenant, silentLogger, testConfig } from './support/fixtures';
import { TcpProxy } from './support/tcp-proxy';

const EVENTS = '/api/v1/ingest/events';

function batch(id: string) {
  return {
    events: Array.from({ length: 10 }, (_, i) => ({
      eventType: 'ticket.resolved',
      category: 'TASK_UPDATE',
      actor: { externalId: `o-${i}` },
      metadata: { batch: id },
    })),
  };
}

describe('PostgreSQL outage', () => {
  let proxy: TcpProxy;
  let direct: Db;
  let viaProxy: Db;

  before(async function () {
    if (testDialect !== 'postgres') this.skip();
    const config = await freshDatabaseConfig();
    if (config.kind !== 'postgres') return;
    direct = openDatabase(config);
    await migrate(direct);
    const url = new URL(config.url);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.open();
    url.port = String(proxy.port);
    viaProxy = openDatabase({ kind: 'postgres', url: url.toString() });
  });

  after(async () => {
    await viaProxy?.close().catch(() => {});
    await direct?.close();
    await proxy?.close();
  });

  it('answers 503 with Retry-After while the database is cut off, writes nothing partial, and recovers without a restart', async function () {
    this.timeout(60_000);
    const tenant = await createTenant(direct);
    const config = testConfig(
      { config: { kind: 'postgres', url: 'postgres://unused' } },
      { RATE_LIMIT_PER_KEY: '100000', RATE_LIMIT_PER_ORG: '100000' },
    );
    const services = createServices(config, viaProxy, { logger: silentLogger });
    const api = client(createApp(config, viaProxy, { logger: silentLogger, services }));
    const outcomes: Array<{ id: string; status: number }> = [];
    const post = async () => {
      const id = randomUUID();
      const started = Date.now();
      const res = await api.post(EVENTS, { key: tenant.key, body: batch(id) });
      assert.ok(Date.now() - started < 20_000, 'no request hangs past the bounded timeout');
      outcomes.push({ id, status: res.status });
      return res;
    };
    try {
      assert.equal((await post()).status, 202);

      // Cut the database off in the middle of a load.
      const load = Array.from({ length: 10 }, () => post());
      await new Promise((resolve) => setTimeout(resolve, 5));
      await proxy.close();
      await Promise.all(load);
      const during = await post();
      assert.equal(during.status, 503);
      assert.equal(during.body.error.code, 'service_unavailable');
      assert.ok(Number(during.headers['retry-after']) >= 1);

      await proxy.open();
      let after;
      for (let i = 0; i < 50; i++) {
        after = await post();
        if (after.status === 202) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(after?.status, 202, 'the service recovered by itself');

      for (const { status } of outcomes) assert.ok([202, 500, 503].includes(status), `status ${status}`);
      const rows = await direct.kysely.selectFrom('events').select('metadata').where('org_id', '=', tenant.orgId).execute();
      const perBatch = new Map<string, number>();
      for (const row of rows) {
        const id = (JSON.parse(row.metadata as string) as { batch: string }).batch;
        perBatch.set(id, (perBatch.get(id) ?? 0) + 1);
      }
      for (const { id, status } of outcomes) {
        const stored = perBatch.get(id) ?? 0;
        if (status === 202) assert.equal(stored, 10, 'an acknowledged batch is stored whole');
        else assert.ok(stored === 0 || stored === 10, `batch ${id} answered ${status} is all or nothing, found ${stored}`);
      }
    } finally {
      await services.close();
    }
  });
});

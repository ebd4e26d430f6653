import assert from 'node:assert/strict';
import { runIngestctl } from '../src/cli/ingestctl';
import { fillWithDemoData } from '../src/domain/demo';
import { issueKey } from '../src/domain/administration';
import { client } from './support/client';
import { databaseUrlOf, setup } from './support/fixtures';

describe('Demo data (ingestctl demo)', () => {
  it('fills an existing organization through the ingest path: apps with whitelists and manifests using every aggregation, workers, events and snapshots', async () => {
    const { db, app, services, tenant } = await setup();
    const now = new Date('2026-11-20T16:00:00Z');
    const result = await fillWithDemoData(services, { orgId: tenant.orgId, workers: 4, days: 3, now });
    assert.equal(result.organizationId, tenant.orgId);
    assert.deepEqual(
      result.apps.map((a) => a.slug),
      ['helpdesk', 'ci', 'assistant'],
    );
    assert.equal(result.workers, 4);
    assert.ok(result.events > 20, `events: ${result.events}`);
    assert.equal(result.snapshots, 2 * 4 * 3);

    const aggregations = new Set<string>();
    const formats = new Set<string>();
    for (const demoApp of result.apps) {
      const { key } = await issueKey(db, demoApp.id);
      const res = await client(app).get('/api/v1/apps/statistics', { key });
      assert.equal(res.status, 200);
      for (const definition of res.body.statistics) {
        aggregations.add(definition.aggregation);
        formats.add(definition.format);
      }
    }
    assert.deepEqual([...aggregations].sort(), ['count', 'durationMinutes', 'rate', 'ratio', 'sumField']);
    assert.deepEqual([...formats].sort(), ['duration_minutes', 'number', 'percent', 'rate_per_day', 'time_of_day']);
  });

  it('gives the same data for the same seed', async () => {
    const { services } = await setup();
    const now = new Date('2026-11-20T16:00:00Z');
    const a = await fillWithDemoData(services, { workers: 3, days: 2, now });
    const b = await fillWithDemoData(services, { workers: 3, days: 2, now });
    assert.notEqual(a.organizationId, b.organizationId);
    assert.equal(a.events, b.events);
  });

  it('refuses an unknown organization, and one that already has the demo apps, with a message', async () => {
    const { config, tenant } = await setup();
    const env = { DATABASE_URL: databaseUrlOf(config.database), LOG_LEVEL: 'silent' };
    const run = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runIngestctl(argv, { env, out: (t) => (out += t), err: (t) => (err += t) });
      return { code, out, err };
    };
    const unknown = await run('demo', '--org', 'org_nope', '--json');
    assert.equal(unknown.code, 1);
    assert.equal(unknown.out, '');
    assert.match(unknown.err, /no organization org_nope/);

    const { services } = await setup();
    await fillWithDemoData(services, { orgId: tenant.orgId, workers: 1, days: 1 });
    const again = await run('demo', '--org', tenant.orgId, '--json');
    assert.equal(again.code, 1);
    assert.match(again.err, /helpdesk/);
  });
});

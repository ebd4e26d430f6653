import assert from 'node:assert/strict';
import request from 'supertest';
import { parse } from 'yaml';
import { setup } from './support/fixtures';

describe('The served contract and reference', () => {
  it('serves openapi/v1.yaml with category set B and the default batch limit', async () => {
    const { app } = await setup();
    const res = await request(app).get('/openapi/v1.yaml');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'], /yaml/);
    const doc = parse(res.text);
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(doc.info.version, '1.0.0');
    assert.deepEqual(doc.components.schemas.EventCategory.enum, [
      'PRESENCE',
      'COMMUNICATION',
      'CODE_CHANGE',
      'CODE_REVIEW',
      'TASK_UPDATE',
      'MEETING',
      'DOCUMENT',
      'AI_TASK',
    ]);
    assert.equal(doc.components.schemas.IngestEventBatch.properties.events.maxItems, 500);
  });

  it('reflects EVENT_CATEGORY_SET=A and INGEST_BATCH_LIMIT=100 in the served document', async () => {
    const { app } = await setup({ EVENT_CATEGORY_SET: 'A', INGEST_BATCH_LIMIT: '100' });
    const doc = parse((await request(app).get('/openapi/v1.yaml')).text);
    assert.deepEqual(doc.components.schemas.EventCategory.enum, [
      'communication',
      'project_management',
      'code',
      'calendar',
      'design',
      'ai_tools',
      'other',
    ]);
    assert.equal(doc.components.schemas.IngestEventBatch.properties.events.maxItems, 100);
    assert.equal(doc.info['x-batch-limit'], 100);
  });

  it('renders /docs from the served document with a local script only (no CDN)', async () => {
    const { app } = await setup();
    const page = await request(app).get('/docs');
    assert.equal(page.status, 200);
    assert.match(page.text, /spec-url="\/openapi\/v1\.yaml"/);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    assert.ok(sources.length > 0);
    for (const source of sources) assert.ok(source.startsWith('/'), `${source} is served by the service itself`);
    const script = await request(app).get('/docs/redoc.standalone.js');
    assert.equal(script.status, 200);
    assert.match(script.headers['content-type'], /javascript/);
    assert.ok(script.text.length > 100_000);
  });
});

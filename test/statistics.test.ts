import assert from 'node:assert/strict';
import request, { type Response } from 'supertest';
import { changeAllowedEventTypes } from '../src/domain/administration';
import { client } from './support/client';
import { setup } from './support/fixtures';
import { definition, type Definition } from './support/rollups';

const path = '/api/v1/apps/statistics';
const categoriesB = ['PRESENCE', 'COMMUNICATION', 'CODE_CHANGE', 'CODE_REVIEW', 'TASK_UPDATE', 'MEETING', 'DOCUMENT', 'AI_TASK'];
const dimensions = ['satisfaction', 'performance', 'activity', 'communication', 'efficiency'];
const typesAllowingMany = Array.from({ length: 33 }, (_, i) => `type.t${String(i).padStart(2, '0')}`);

/** The id `slug.xxx…` of exactly `length` characters. */
function idOfLength(slug: string, length: number): string {
  return `${slug}.${'x'.repeat(length - slug.length - 1)}`;
}

function assertRefused(res: Response, message: string): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error.code, 'invalid_body');
  assert.equal(res.body.error.message, message);
}

async function putManifest(options: Parameters<typeof setup>, build: (slug: string) => unknown) {
  const { app, tenant, db } = await setup(...options);
  const api = client(app);
  const put = await api.put(path, { key: tenant.key, body: build(tenant.slug) });
  return { api, put, tenant, db };
}

describe('GET /api/v1/apps/statistics', () => {
  it('answers [] for a new app', async () => {
    const { app, tenant } = await setup();
    const res = await client(app).get(path, { key: tenant.key });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { requestId: res.headers['x-request-id'], statistics: [] });
  });

  it('answers 401 missing_authorization without a key, for GET and PUT', async () => {
    const { app, tenant } = await setup();
    const api = client(app);
    const get = await api.get(path);
    const put = await api.put(path, { body: [definition(tenant.slug, 'a')] });
    for (const res of [get, put]) {
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'missing_authorization');
    }
    assert.deepEqual((await api.get(path, { key: tenant.key })).body.statistics, []);
  });

  it('keeps manifests per app: each key reads and replaces only its own', async () => {
    const first = await setup();
    const second = await setup();
    const api = client(first.app);
    const firstPut = await api.put(path, { key: first.tenant.key, body: [definition(first.tenant.slug, 'a')] });
    const secondPut = await api.put(path, {
      key: second.tenant.key,
      body: [definition(second.tenant.slug, 'b'), definition(second.tenant.slug, 'c')],
    });
    assert.equal(firstPut.status, 200);
    assert.equal(secondPut.status, 200);
    const firstIds = (await api.get(path, { key: first.tenant.key })).body.statistics.map((d: Definition) => d.id);
    const secondIds = (await api.get(path, { key: second.tenant.key })).body.statistics.map((d: Definition) => d.id);
    assert.deepEqual(firstIds, [`${first.tenant.slug}.a`]);
    assert.deepEqual(secondIds, [`${second.tenant.slug}.b`, `${second.tenant.slug}.c`]);
  });
});

describe('PUT /api/v1/apps/statistics', () => {
  describe('success', () => {
    it('accepts { statistics: [...] } and a bare array alike, answering 200 with the stored manifest', async () => {
      for (const wrap of [(list: Definition[]) => ({ statistics: list }), (list: Definition[]) => list]) {
        const { api, put, tenant } = await putManifest([], (slug) => wrap([definition(slug, 'a'), definition(slug, 'b')]));
        assert.equal(put.status, 200);
        assert.equal(put.body.requestId, put.headers['x-request-id']);
        assert.deepEqual(
          put.body.statistics.map((d: Definition) => d.id),
          [`${tenant.slug}.a`, `${tenant.slug}.b`],
        );
        assert.deepEqual((await api.get(path, { key: tenant.key })).body.statistics, put.body.statistics);
      }
    });

    it('fills in the defaults and keeps values that were given', async () => {
      const { api, put, tenant } = await putManifest([], (slug) => [
        definition(slug, 'defaults'),
        definition(slug, 'given', { defaultEnabled: false, ownedBy: 'extractor', feedsDimensions: ['activity'], description: 'D' }),
      ]);
      assert.equal(put.status, 200);
      const [defaults, given] = put.body.statistics;
      assert.deepEqual(defaults, { ...definition(tenant.slug, 'defaults'), feedsDimensions: [], defaultEnabled: true, ownedBy: 'none' });
      assert.deepEqual(given, {
        ...definition(tenant.slug, 'given'),
        description: 'D',
        feedsDimensions: ['activity'],
        defaultEnabled: false,
        ownedBy: 'extractor',
      });
      assert.deepEqual((await api.get(path, { key: tenant.key })).body.statistics, [defaults, given]);
    });

    it('keeps the order sent and replaces the whole manifest on the next PUT, [] included', async () => {
      const { api, put, tenant } = await putManifest([], (slug) => [definition(slug, 'z'), definition(slug, 'a'), definition(slug, 'm')]);
      assert.equal(put.status, 200);
      const ids = async () => (await api.get(path, { key: tenant.key })).body.statistics.map((d: Definition) => d.id);
      assert.deepEqual(
        await ids(),
        ['z', 'a', 'm'].map((n) => `${tenant.slug}.${n}`),
      );
      assert.equal((await api.put(path, { key: tenant.key, body: [definition(tenant.slug, 'q')] })).status, 200);
      assert.deepEqual(await ids(), [`${tenant.slug}.q`]);
      assert.equal((await api.put(path, { key: tenant.key, body: { statistics: [] } })).status, 200);
      assert.deepEqual(await ids(), []);
    });

    it("lets events name a statistic of their app's manifest, and only those", async () => {
      const { api, put, tenant, db } = await putManifest([], (slug) => [definition(slug, 'a'), definition(slug, 'b')]);
      assert.equal(put.status, 200);
      const other = await putManifest([], (slug) => [definition(slug, 'a')]);
      const named = (statisticId: string) => ({
        eventType: 'ticket.resolved',
        category: 'TASK_UPDATE',
        actor: { externalId: 'stat' },
        statisticId,
      });
      const res = await api.post('/api/v1/ingest/events', {
        key: tenant.key,
        body: { events: [named(`${tenant.slug}.b`), named(`${tenant.slug}.c`), named(`${other.tenant.slug}.a`)] },
      });
      assert.equal(res.status, 207);
      assert.deepEqual(
        res.body.results.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
        [
          [1, 'invalid_body'],
          [2, 'invalid_body'],
        ],
      );
      assert.match(res.body.results.rejected[0].message, /statisticId .* is not in the app's statistic manifest/);
      const row = await db.kysely
        .selectFrom('events')
        .select('statistic_id')
        .where('id', '=', res.body.results.accepted[0].id)
        .executeTakeFirstOrThrow();
      assert.equal(row.statistic_id, `${tenant.slug}.b`);
    });
  });

  describe('atomicity', () => {
    it('leaves the previous manifest untouched when a PUT is refused', async () => {
      const { api, put, tenant } = await putManifest([], (slug) => [definition(slug, 'a'), definition(slug, 'b')]);
      assert.equal(put.status, 200);
      const refusals = [
        [definition(tenant.slug, 'c'), definition(tenant.slug, 'd', { label: '' })],
        [definition(tenant.slug, 'c'), definition(tenant.slug, 'd', { sourceEventTypes: ['deploy.done'] })],
        [definition(tenant.slug, 'c'), definition(tenant.slug, 'c')],
        [definition(tenant.slug, 'c'), { ...definition(tenant.slug, 'd'), id: 'other.d' }],
      ];
      for (const body of refusals) {
        assert.equal((await api.put(path, { key: tenant.key, body })).status, 400);
        assert.deepEqual((await api.get(path, { key: tenant.key })).body.statistics, put.body.statistics);
      }
    });
  });

  describe('the number of definitions', () => {
    it('accepts 32 definitions', async () => {
      const { put } = await putManifest([], (slug) => Array.from({ length: 32 }, (_, i) => definition(slug, `s${i}`)));
      assert.equal(put.status, 200);
      assert.equal(put.body.statistics.length, 32);
    });

    it('refuses 33 definitions', async () => {
      const { put } = await putManifest([], (slug) => ({ statistics: Array.from({ length: 33 }, (_, i) => definition(slug, `s${i}`)) }));
      assertRefused(put, 'statistics must NOT have more than 32 items');
    });
  });

  describe('the body', () => {
    const shapes: Array<[string, (slug: string) => unknown]> = [
      ['an object without statistics', () => ({})],
      ['statistics that is not an array', () => ({ statistics: 'all' })],
      ['another property beside statistics', (slug) => ({ statistics: [definition(slug, 'a')], version: 2 })],
    ];
    for (const [what, build] of shapes) {
      it(`refuses ${what}`, async () => {
        const { put } = await putManifest([], build);
        assertRefused(
          put,
          'the body does not match any allowed form: The whole new manifest, as { "statistics": [definitions] } or as a bare array of definitions.',
        );
      });
    }

    it('refuses a definition that is not an object, naming it without an id', async () => {
      const { put } = await putManifest([], (slug) => [definition(slug, 'a'), 'b']);
      assertRefused(put, 'statistics[1] (no id): must be object');
    });
  });

  /**
   * Each rule at its boundary, alone: the tested definition is second in a manifest
   * whose first definition is valid, so the message must name index 1 and its id.
   */
  interface Case {
    rule: string;
    env?: Record<string, string>;
    allowed?: string[];
    /** Fields of both definitions, when the defaults do not suit `env` or `allowed`. */
    base?: Definition;
    overrides: (slug: string) => Definition;
    /** The rule part of the message (`<slug>` stands for the app's); absent when the definition is valid. */
    refusal?: string;
  }

  const cases: Case[] = [
    { rule: 'id of 80 chars', overrides: (slug) => ({ id: idOfLength(slug, 80) }) },
    { rule: 'id of 81 chars', overrides: (slug) => ({ id: idOfLength(slug, 81) }), refusal: 'id must NOT have more than 80 characters' },
    // A NUL could not be stored where an event names the statistic: PostgreSQL text cannot hold it.
    {
      rule: 'an id with U+0000',
      overrides: (slug) => ({ id: `${slug}.a\u0000b` }),
      refusal: 'id must match pattern "^[^\\u0000\\p{Cs}]*$"',
    },
    { rule: 'label of 0 chars', overrides: () => ({ label: '' }), refusal: 'label must NOT have fewer than 1 characters' },
    { rule: 'label of 1 char', overrides: () => ({ label: 'L' }) },
    { rule: 'label of 120 chars', overrides: () => ({ label: 'L'.repeat(120) }) },
    { rule: 'label of 121 chars', overrides: () => ({ label: 'L'.repeat(121) }), refusal: 'label must NOT have more than 120 characters' },
    { rule: 'no label', overrides: () => ({ label: undefined }), refusal: 'must have the property "label"' },
    { rule: 'description of 500 chars', overrides: () => ({ description: 'd'.repeat(500) }) },
    {
      rule: 'description of 501 chars',
      overrides: () => ({ description: 'd'.repeat(501) }),
      refusal: 'description must NOT have more than 500 characters',
    },
    {
      rule: 'sourceEventTypes of 0 items',
      overrides: () => ({ sourceEventTypes: [] }),
      refusal: 'sourceEventTypes must NOT have fewer than 1 items',
    },
    { rule: 'sourceEventTypes of 1 item', overrides: () => ({ sourceEventTypes: ['build.finished'] }) },
    {
      rule: 'sourceEventTypes of 32 items',
      allowed: typesAllowingMany,
      base: { sourceEventTypes: ['type.t00'] },
      overrides: () => ({ sourceEventTypes: typesAllowingMany.slice(0, 32) }),
    },
    {
      rule: 'sourceEventTypes of 33 items',
      allowed: typesAllowingMany,
      base: { sourceEventTypes: ['type.t00'] },
      overrides: () => ({ sourceEventTypes: typesAllowingMany }),
      refusal: 'sourceEventTypes must NOT have more than 32 items',
    },
    {
      rule: 'a source event type off the whitelist',
      overrides: () => ({ sourceEventTypes: ['ticket.resolved', 'deploy.done'] }),
      refusal: `sourceEventTypes[1] "deploy.done" is not in the app's allowedEventTypes`,
    },
    {
      rule: 'sourceEventCategories of 0 items',
      overrides: () => ({ sourceEventCategories: [] }),
      refusal: 'sourceEventCategories must NOT have fewer than 1 items',
    },
    { rule: 'sourceEventCategories of 1 item', overrides: () => ({ sourceEventCategories: ['MEETING'] }) },
    { rule: 'sourceEventCategories of 8 items (the whole set)', overrides: () => ({ sourceEventCategories: categoriesB }) },
    { rule: 'sourceEventCategories with a duplicate', overrides: () => ({ sourceEventCategories: ['MEETING', 'MEETING'] }) },
    {
      rule: 'sourceEventCategories of 9 items (a duplicate past the set)',
      overrides: () => ({ sourceEventCategories: [...categoriesB, 'MEETING'] }),
      refusal: 'sourceEventCategories must NOT have more than 8 items',
    },
    {
      rule: 'a category of the inactive set A while B is active',
      overrides: () => ({ sourceEventCategories: ['MEETING', 'code'] }),
      refusal: `sourceEventCategories[1] must be one of ${categoriesB.join(', ')}`,
    },
    {
      rule: 'a category of the inactive set B while A is active',
      env: { EVENT_CATEGORY_SET: 'A' },
      base: { sourceEventCategories: ['code'] },
      overrides: () => ({ sourceEventCategories: ['CODE_CHANGE'] }),
      refusal: 'sourceEventCategories[0] must be one of communication, project_management, code, calendar, design, ai_tools, other',
    },
    { rule: 'feedsDimensions of 0 items', overrides: () => ({ feedsDimensions: [] }) },
    { rule: 'feedsDimensions of 5 items', overrides: () => ({ feedsDimensions: dimensions }) },
    {
      rule: 'feedsDimensions of 6 items',
      overrides: () => ({ feedsDimensions: [...dimensions, 'activity'] }),
      refusal: 'feedsDimensions must NOT have more than 5 items',
    },
    {
      rule: 'a feedsDimensions value outside its enum',
      overrides: () => ({ feedsDimensions: ['happiness'] }),
      refusal: `feedsDimensions[0] must be one of ${dimensions.join(', ')}`,
    },
    {
      rule: 'a pillar outside its enum',
      overrides: () => ({ pillar: 'SPEED' }),
      refusal: 'pillar must be one of ACTIVITY, COMMUNICATION, DELIVERY, REVIEW, KNOWLEDGE',
    },
    {
      rule: 'a format outside its enum',
      overrides: () => ({ format: 'seconds' }),
      refusal: 'format must be one of number, duration_minutes, percent, time_of_day, rate_per_day',
    },
    {
      rule: 'an aggregation outside its enum',
      overrides: () => ({ aggregation: 'median' }),
      refusal: 'aggregation must be one of count, sumField, durationMinutes, rate, ratio',
    },
    { rule: 'an ownedBy outside its enum', overrides: () => ({ ownedBy: 'someone' }), refusal: 'ownedBy must be one of extractor, none' },
    {
      rule: 'defaultEnabled that is not a boolean',
      overrides: () => ({ defaultEnabled: 'yes' }),
      refusal: 'defaultEnabled must be boolean',
    },
    { rule: 'an unknown property', overrides: () => ({ color: 'red' }), refusal: 'must not have the property "color"' },
    { rule: 'aggregation count without valueField', overrides: () => ({ aggregation: 'count' }) },
    { rule: 'aggregation sumField with valueField', overrides: () => ({ aggregation: 'sumField', valueField: 'minutes' }) },
    { rule: 'aggregation ratio with valueField', overrides: () => ({ aggregation: 'ratio', valueField: 'share' }) },
    {
      rule: 'aggregation sumField without valueField',
      overrides: () => ({ aggregation: 'sumField' }),
      refusal: 'must have the property "valueField" when aggregation is sumField or ratio',
    },
    {
      rule: 'aggregation ratio without valueField',
      overrides: () => ({ aggregation: 'ratio' }),
      refusal: 'must have the property "valueField" when aggregation is sumField or ratio',
    },
    {
      rule: 'an id of another app',
      overrides: () => ({ id: 'other-app.tickets' }),
      refusal: 'id must start with "<slug>." (the app\'s slug and a dot)',
    },
    {
      rule: 'an id that starts with the slug but no dot',
      overrides: (slug) => ({ id: `${slug}-tickets` }),
      refusal: 'id must start with "<slug>." (the app\'s slug and a dot)',
    },
  ];

  describe('each rule at its boundary', () => {
    for (const { rule, env, allowed, base, overrides, refusal } of cases) {
      it(`${refusal ? 'refuses' : 'accepts'} ${rule}`, async () => {
        let candidate: Definition = {};
        const { put, tenant } = await putManifest([env, allowed && { allowed }], (slug) => {
          candidate = definition(slug, 'candidate', { ...base, ...overrides(slug) });
          return [definition(slug, 'first', base), candidate];
        });
        if (!refusal) {
          assert.equal(put.status, 200, JSON.stringify(put.body));
          assert.deepEqual(put.body.statistics[1], { feedsDimensions: [], defaultEnabled: true, ownedBy: 'none', ...candidate });
          return;
        }
        assertRefused(put, `statistics[1] (id ${JSON.stringify(candidate.id)}): ${refusal.replace('<slug>', tenant.slug)}`);
      });
    }
  });

  describe('ids', () => {
    it('refuses a duplicate id, naming the later definition and the earlier one', async () => {
      const { put, tenant } = await putManifest([], (slug) => [definition(slug, 'a'), definition(slug, 'b'), definition(slug, 'a')]);
      assertRefused(put, `statistics[2] (id "${tenant.slug}.a"): id must be unique in the manifest; statistics[0] has it too`);
    });
  });

  describe('the whitelist', () => {
    it('is the one in force at the time of the PUT', async () => {
      const { app, db, tenant } = await setup();
      const api = client(app);
      const body = [definition(tenant.slug, 'deploys', { sourceEventTypes: ['deploy.done'] })];
      assertRefused(
        await api.put(path, { key: tenant.key, body }),
        `statistics[0] (id "${tenant.slug}.deploys"): sourceEventTypes[0] "deploy.done" is not in the app's allowedEventTypes`,
      );
      await changeAllowedEventTypes(db, tenant.appId, ['deploy.done'], true);
      assert.equal((await api.put(path, { key: tenant.key, body })).status, 200);
      await changeAllowedEventTypes(db, tenant.appId, ['deploy.done'], false);
      assert.equal((await api.put(path, { key: tenant.key, body })).status, 400);
    });
  });

  describe('the active category set', () => {
    it('accepts a category of set A when A is active', async () => {
      const { app, tenant } = await setup({ EVENT_CATEGORY_SET: 'A' });
      // Plain supertest: the shared contract check judges bodies against the default set B.
      const res = await request(app)
        .put(path)
        .set('Authorization', `Bearer ${tenant.key}`)
        .send([definition(tenant.slug, 'code', { sourceEventCategories: ['code', 'ai_tools'] })]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.statistics[0].sourceEventCategories, ['code', 'ai_tools']);
    });
  });
});

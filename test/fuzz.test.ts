import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Schema as ContractSchema } from '../src/contract/types';
import { configuredDocument } from '../src/contract/document';
import { ContractValidators } from '../src/contract/validators';
import { addWorker, issueKey, revokeKey, setPlan } from '../src/domain/administration';
import { statusOf, type ErrorCode } from '../src/errors';
import { maxBodyBytes, maxNestingDepth } from '../src/contract/constants';
import { createMember, signIn } from './support/console';
import { createTenant, issueExpiredKey, setup, type Tenant } from './support/fixtures';
import {
  assertError,
  assertStoredAsSent,
  fuzzParameters,
  fuzzRuns,
  fuzzSeed,
  FuzzTarget,
  type FuzzRequest,
  headerValues,
  parseLikeServer,
  sameJson,
  shapeOf,
} from './support/fuzz';
import { encodeJson } from './support/json-text';
import { instantOf, SchemaArbitraries } from './support/schema-arbitrary';
import { SchemaModel, type Schema } from './support/schema-model';
import { SchemaMutations, type Mutant } from './support/schema-mutation';

type Setup = Awaited<ReturnType<typeof setup>>;

const PING = '/api/v1/ingest/ping';
const EVENTS = '/api/v1/ingest/events';
const SNAPSHOTS = '/api/v1/ingest/snapshots';
const STATISTICS = '/api/v1/apps/statistics';
const SIGN_IN = '/api/v1/console/session';

// Rate limits out of the way: thousands of requests a second from one key are the point here. Keys do
// not change state while a property runs, so their lookups may be cached: two queries less per request.
const env = { RATE_LIMIT_PER_KEY: '1000000', RATE_LIMIT_PER_ORG: '10000000', AUTH_CACHE_TTL_SECONDS: '60' };
const doc = configuredDocument({ eventCategorySet: 'B', ingestBatchLimit: 500 });
const model = new SchemaModel(doc);
const mutations = new SchemaMutations(model);
const oracle = new ContractValidators(doc);
const idempotencyKey = doc.components.parameters.IdempotencyKey.schema as Schema;

/** A valid body as is, or mutated at one place. */
function bodies(schema: Schema, valid: fc.Arbitrary<unknown>): fc.Arbitrary<Mutant> {
  const asIs = valid.map(
    (body) => ({ original: body, at: '', kind: 'valid', body, [fc.toStringMethod]: () => `valid: ${JSON.stringify(body)}` }) as Mutant,
  );
  return fc.oneof({ weight: 1, arbitrary: asIs }, { weight: 3, arbitrary: mutations.of(schema, valid) });
}

/** How a mutated body travels: sometimes gzipped or chunked, with an odd content type or Idempotency-Key. */
const sometimes = fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
const transport = fc.record({
  gzip: sometimes,
  chunked: sometimes,
  contentType: fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'application/json; charset=latin1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json;;',
    ),
  ),
  idempotencyKey: fc.option(headerValues(idempotencyKey), { nil: undefined }),
});
const plain = { gzip: false, chunked: false, contentType: 'application/json', idempotencyKey: undefined };
type Transport = typeof transport extends fc.Arbitrary<infer T> ? T : never;

/** Distinct event types from the TypeName pattern, to put on a tenant's whitelist. */
function sampleTypeNames(count: number): string[] {
  return [
    ...new Set(
      fc.sample(new SchemaArbitraries(model).valid(model.named('TypeName')) as fc.Arbitrary<string>, { numRuns: count, seed: fuzzSeed }),
    ),
  ];
}

/** Valid manifests of the app `slug`: ids under its prefix and unique, event types from its whitelist. */
function manifests(slug: string, whitelist: string[]): fc.Arbitrary<unknown> {
  const id = fc.string({ maxLength: 20 }).map((rest) => `${slug}.${rest}`);
  const types = fc.constantFrom(...whitelist);
  const arbitraries = new SchemaArbitraries(model, {
    overrides: { 'statistics/*/id': id, '*/id': id, 'statistics/*/sourceEventTypes/*': types, '*/sourceEventTypes/*': types },
  });
  return arbitraries.valid(model.named('StatisticsPutRequest')).map((body) => {
    const list = (Array.isArray(body) ? body : (body as { statistics: Array<{ id: string }> }).statistics) as Array<{ id: string }>;
    // Unique by index: the digits before the next dot differ for every definition.
    const unique = list.map((definition, i) => ({ ...definition, id: `${slug}.${i}.${definition.id.slice(slug.length + 1)}` }));
    return Array.isArray(body) ? unique : { statistics: unique };
  });
}

function definitionsOf(body: unknown): Array<Record<string, unknown>> {
  return (Array.isArray(body) ? body : (body as { statistics: unknown[] }).statistics) as Array<Record<string, unknown>>;
}

/**
 * Generated Idempotency-Keys repeat across cases ("k" often); a key sent again
 * with another body is rightly 422 (or 409 while the first runs). The contract
 * check has passed; what the body would have got is not this case's answer.
 */
function reusedKey(res: { status: number }, key: string | undefined): boolean {
  return key !== undefined && (res.status === 422 || res.status === 409);
}

/**
 * POSTs a generated ingest body, a valid one plainly and any other the generated way
 * (Idempotency-Key included); the answer, the way it was sent and the value the server parsed, or undefined
 * when the answer rightly came before the body's schema was judged.
 */
async function postIngest(to: FuzzTarget, path: string, key: string, mutant: Mutant, via: typeof plain | Transport) {
  const way = mutant.kind === 'valid' ? plain : via;
  const bytes = encodeJson(mutant.body);
  const headers: Record<string, string> = way.idempotencyKey === undefined ? {} : { 'Idempotency-Key': way.idempotencyKey };
  const res = await to.send({ method: 'POST', path, authorization: `Bearer ${key}`, body: bytes, headers, ...way });
  if (answeredBeforeSchema(res, bytes, way.contentType) || reusedKey(res, way.idempotencyKey)) return undefined;
  return { res, way, sent: (parseLikeServer(bytes) as { value: unknown }).value };
}

/** What is true of any body sent to a JSON endpoint before its schema is considered. */
function answeredBeforeSchema(res: Awaited<ReturnType<FuzzTarget['send']>>, bytes: Buffer, contentType: string): boolean {
  if (!/^application\/json(;\s*charset=utf-8)?$/i.test(contentType)) return true;
  if (bytes.length > maxBodyBytes) {
    assertError(res, 413, ['batch_too_large']);
    return true;
  }
  const parsed = parseLikeServer(bytes);
  const shape = parsed.ok ? shapeOf(parsed.value) : undefined;
  if (!shape || shape.depth > maxNestingDepth || !shape.finite) {
    assertError(res, 400, ['invalid_body']);
    return true;
  }
  return false;
}

describe(`Fuzzing every endpoint with bodies generated from openapi/v1.yaml (FUZZ_RUNS=${fuzzRuns}, FUZZ_SEED=${fuzzSeed})`, function () {
  this.timeout(300_000);
  let target: FuzzTarget | undefined;
  let ctx: Setup;

  before(() => {
    process.stdout.write(`    fuzz: replay with FUZZ_SEED=${fuzzSeed} FUZZ_RUNS=${fuzzRuns}\n`);
  });

  beforeEach(async () => {
    ctx = await setup(env);
    target = await FuzzTarget.start(ctx.app);
  });

  afterEach(async () => {
    await target?.close();
  });

  /** Workers of the tenant's organization that a valid actor's workerId may name. */
  async function directory(tenant: Tenant): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await addWorker(ctx.db, { orgId: tenant.orgId, email: `fuzz-${i}@directory.example` })).id);
    return ids;
  }

  async function storeManifest(tenant: Tenant, body: unknown): Promise<string[]> {
    const res = await (target as FuzzTarget).send({
      method: 'PUT',
      path: STATISTICS,
      authorization: `Bearer ${tenant.key}`,
      contentType: 'application/json',
      body: encodeJson(body),
    });
    assert.equal(res.status, 200, res.text);
    return definitionsOf(body).map((definition) => definition.id as string);
  }

  it('POST events: never a 5xx, every answer in the contract, valid events accepted, invalid ones rejected, counts adding up', async () => {
    const whitelist = sampleTypeNames(40);
    const tenant = await createTenant(ctx.db, { allowed: whitelist });
    const workerIds = await directory(tenant);
    const [manifest] = fc.sample(
      manifests(tenant.slug, whitelist).filter((body) => definitionsOf(body).length > 0),
      { numRuns: 1, seed: fuzzSeed },
    );
    const statisticIds = await storeManifest(tenant, manifest);
    const schema = model.named('IngestEventBatch');
    const valid = new SchemaArbitraries(model, {
      overrides: {
        'events/*/eventType': fc.constantFrom(...whitelist),
        'events/*/actor/workerId': fc.constantFrom(...workerIds),
        'events/*/statisticId': fc.constantFrom(...statisticIds),
      },
    }).valid(schema);
    const issueOf = oracle.item('IngestEvent');
    const perEventCodes: ErrorCode[] = ['invalid_body', 'missing_actor', 'forbidden_event_type', 'worker_not_found', 'quota_exceeded'];

    const property = fc.asyncProperty(bodies(schema, valid), transport, async (mutant, via) => {
      const judged = await postIngest(target as FuzzTarget, EVENTS, tenant.key, mutant, via);
      if (!judged) return;
      const { res } = judged;
      const sent = judged.sent as { events?: unknown };
      const original = (mutant.original as { events: unknown[] }).events;
      if (mutant.kind === 'valid') assert.equal(res.status, 202, res.text);
      if (!('results' in res.body)) return; // refused as a whole: the envelope or a header; the contract check has passed

      const events = sent.events as unknown[];
      const { accepted, rejected } = res.body.results as ContractSchema<'BatchResults'>;
      assert.equal((res.body.accepted as number) + (res.body.rejected as number), events.length, 'accepted + rejected = batch size');
      assert.equal(accepted.length, res.body.accepted);
      assert.equal(rejected.length, res.body.rejected);
      const indexes = rejected.map((r) => r.index);
      assert.deepEqual(
        indexes,
        [...new Set(indexes)].sort((a, b) => a - b),
        'each rejected index once, in order',
      );
      assert.ok(
        indexes.every((i) => i >= 0 && i < events.length),
        'rejected indexes are positions in the batch',
      );
      assert.ok(
        rejected.every((r) => perEventCodes.includes(r.code)),
        'per-event codes only',
      );
      const [first] = rejected;
      assert.equal(res.status, !first ? 202 : accepted.length ? 207 : statusOf(first.code));

      const acceptedIndexes = events.map((_, i) => i).filter((i) => !indexes.includes(i));
      events.forEach((event, i) => {
        const issue = issueOf(event);
        if (issue) {
          const rejection = rejected.find((r) => r.index === i);
          assert.ok(
            rejection && ['invalid_body', 'missing_actor'].includes(rejection.code),
            `event ${i} breaks the contract (${issue.path} ${issue.message}) yet was not refused as such`,
          );
        }
        if (sameJson(event, original[i]))
          assert.ok(acceptedIndexes.includes(i), `the valid, whitelisted event ${i} was refused: ${JSON.stringify(rejected)}`);
      });
      const rows = await ctx.db.kysely
        .selectFrom('events')
        .select(['id', 'metadata'])
        .where('request_id', '=', res.body.requestId as string)
        .execute();
      assert.equal(rows.length, accepted.length, 'exactly the accepted events are stored');
      acceptedIndexes.forEach((i, n) => {
        const event = events[i] as { eventType: string; timestamp?: string; metadata?: unknown };
        assert.equal(accepted[n]?.eventType, event.eventType);
        if (event.timestamp !== undefined)
          assert.equal(Date.parse(accepted[n]?.timestamp as string), instantOf(event.timestamp), 'the timestamp, in UTC');
        assertStoredAsSent(rows.find((row) => row.id === accepted[n]?.id)?.metadata ?? null, event.metadata, `the metadata of event ${i}`);
      });
    });
    await fc.assert(property, fuzzParameters);
  });

  it('POST snapshots: never a 5xx, every answer in the contract, valid snapshots accepted, invalid ones refused', async () => {
    const tenant = await createTenant(ctx.db, { allowed: [] });
    const workerIds = await directory(tenant);
    const schema = model.named('IngestSnapshot');
    const valid = new SchemaArbitraries(model, { overrides: { 'actor/workerId': fc.constantFrom(...workerIds) } }).valid(schema);
    const issueOf = oracle.item('IngestSnapshot');

    const property = fc.asyncProperty(bodies(schema, valid), transport, async (mutant, via) => {
      const judged = await postIngest(target as FuzzTarget, SNAPSHOTS, tenant.key, mutant, via);
      if (!judged) return;
      const { res, sent, way } = judged;
      if (issueOf(sent)) assertError(res, 400, ['invalid_body', 'missing_actor']);
      if (res.status === 202) {
        const row = await ctx.db.kysely
          .selectFrom('events')
          .select(['metrics', 'metadata'])
          .where('request_id', '=', res.body.requestId as string)
          .executeTakeFirstOrThrow();
        const { metrics, metadata } = sent as { metrics: Record<string, unknown>; metadata?: unknown };
        assertStoredAsSent(JSON.stringify(Object.fromEntries(JSON.parse(row.metrics as string))), metrics, 'the metrics');
        assertStoredAsSent(row.metadata, metadata, 'the metadata');
        const { workerId, externalId } = (sent as { actor: { workerId?: string; externalId?: string } }).actor;
        if (!workerId && externalId !== undefined) {
          const link = await ctx.db.kysely
            .selectFrom('worker_external_ids')
            .select(['external_id', 'worker_id'])
            .where('app_id', '=', tenant.appId)
            .where('external_id', '=', externalId)
            .executeTakeFirstOrThrow();
          assert.deepEqual(
            link,
            { external_id: externalId, worker_id: (res.body.worker as { id: string }).id },
            'the externalId is stored as sent and names the worker answered',
          );
        }
      }
      if (sameJson(sent, mutant.original) && way.idempotencyKey === undefined) {
        assert.equal(res.status, 202, res.text);
        assert.equal(res.body.snapshotType, (sent as { snapshotType: string }).snapshotType);
        const { workerId } = (sent as { actor: { workerId?: string } }).actor;
        if (workerId) assert.equal((res.body.worker as { id: string }).id, workerId);
      }
    });
    await fc.assert(property, fuzzParameters);
  });

  it('PUT statistics: never a 5xx, every answer in the contract, valid manifests stored as sent, anything else leaving the manifest as it was', async () => {
    const whitelist = sampleTypeNames(20);
    const tenant = await createTenant(ctx.db, { allowed: whitelist });
    const schema = model.named('StatisticsPutRequest');
    const issueOf = oracle.item('StatisticsPutRequest');
    const auth = `Bearer ${tenant.key}`;
    let stored: unknown[] = [];

    const property = fc.asyncProperty(bodies(schema, manifests(tenant.slug, whitelist)), transport, async (mutant, via) => {
      const way = mutant.kind === 'valid' ? plain : via;
      const bytes = encodeJson(mutant.body);
      const res = await (target as FuzzTarget).send({ method: 'PUT', path: STATISTICS, authorization: auth, body: bytes, ...way });
      const after = await (target as FuzzTarget).send({ method: 'GET', path: STATISTICS, authorization: auth });
      assert.equal(after.status, 200);
      if (res.status === 200) stored = res.body.statistics as unknown[];
      assert.deepEqual(after.body.statistics, stored, 'GET shows the last manifest stored; a refused PUT changed nothing');
      if (answeredBeforeSchema(res, bytes, way.contentType)) return;

      const sent = (parseLikeServer(bytes) as { value: unknown }).value;
      if (issueOf(sent)) assertError(res, 400, ['invalid_body']);
      if (mutant.kind === 'valid') {
        assert.equal(res.status, 200, res.text);
        const withDefaults = definitionsOf(sent).map((d) => ({ feedsDimensions: [], defaultEnabled: true, ownedBy: 'none', ...d }));
        assert.deepEqual(res.body.statistics, withDefaults);
      }
    });
    await fc.assert(property, fuzzParameters);
  });

  it('POST console session (sign-in): never a 5xx, every answer in the contract, the right password signing in, anything else refused', async () => {
    // Each case is a scrypt verification or more, so a tenth of the runs; the sessions' clock moves 16
    // minutes a case, so failed sign-ins never add up to the throttle and every case is judged on its own.
    let clock = Date.parse('2001-01-01T00:00:00Z') + Math.floor(Math.random() * 1000) * 86_400_000;
    const own = await setup(env, {}, { now: () => new Date(clock) });
    const signInTarget = await FuzzTarget.start(own.app);
    const member = await createMember(own.db, { orgId: own.tenant.orgId });
    const schema = model.named('SignInRequest');
    const issueOf = oracle.item('SignInRequest');
    const valid = fc.record(
      {
        email: fc.constantFrom(member.email, member.email.toUpperCase(), `other-${member.email}`),
        password: fc.oneof(fc.constant(member.password), fc.string({ maxLength: 200 })),
        organizationId: fc.constantFrom(member.orgId, 'org_unknown'),
      },
      { requiredKeys: ['email', 'password'] },
    );
    try {
      const property = fc.asyncProperty(bodies(schema, valid), transport, async (mutant, via) => {
        clock += 16 * 60_000;
        const way = mutant.kind === 'valid' ? plain : via;
        const bytes = encodeJson(mutant.body);
        const res = await signInTarget.send({ method: 'POST', path: SIGN_IN, body: bytes, ...way });
        if (answeredBeforeSchema(res, bytes, way.contentType)) return;
        const sent = (parseLikeServer(bytes) as { value: unknown }).value;
        if (issueOf(sent)) return assertError(res, 400, ['invalid_body']);
        const { email, password, organizationId } = sent as ContractSchema<'SignInRequest'>;
        const right =
          email.toLowerCase() === member.email.toLowerCase() &&
          password === member.password &&
          (organizationId === undefined || organizationId === member.orgId);
        if (!right) return assertError(res, 401, ['invalid_credentials']);
        assert.equal(res.status, 200, res.text);
        assert.equal((res.body.member as { id: string }).id, member.memberId);
        assert.match(String(res.headers['set-cookie']), /^ingest_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
      });
      await fc.assert(property, { ...fuzzParameters, numRuns: Math.ceil(fuzzRuns / 10) });
    } finally {
      await signInTarget.close();
    }
  });

  describe('console administration bodies, as an owner', () => {
    const cases: Array<[FuzzRequest['method'], (t: Tenant, memberId: string) => string, string]> = [
      ['POST', () => '/api/v1/console/apps', 'AppCreateRequest'],
      ['PUT', (t) => `/api/v1/console/apps/${t.appId}/allowed-event-types`, 'AllowedEventTypesRequest'],
      ['POST', (t) => `/api/v1/console/apps/${t.appId}/keys`, 'ApiKeyIssueRequest'],
      ['POST', () => '/api/v1/console/members', 'MemberInviteRequest'],
      ['PATCH', (_t, memberId) => `/api/v1/console/members/${memberId}`, 'MemberRoleRequest'],
      ['PATCH', () => '/api/v1/console/organization', 'OrganizationPatchRequest'],
    ];
    for (const [method, pathOf, schemaName] of cases) {
      it(`${method} ${schemaName}: never a 5xx, every answer in the contract, a body breaking the schema refused with invalid_body`, async () => {
        const session = await signIn(ctx.app, ctx.db, { role: 'owner', orgId: ctx.tenant.orgId });
        const other = await createMember(ctx.db, { orgId: ctx.tenant.orgId, role: 'member' });
        const path = pathOf(ctx.tenant, other.memberId);
        const schema = model.named(schemaName);
        const issueOf = oracle.item(schemaName);
        const headers = { Cookie: session.cookie, 'X-CSRF-Token': session.csrfToken };
        const property = fc.asyncProperty(bodies(schema, new SchemaArbitraries(model).valid(schema)), transport, async (mutant, via) => {
          const { idempotencyKey: _none, ...way } = mutant.kind === 'valid' ? plain : via;
          const bytes = encodeJson(mutant.body);
          const res = await (target as FuzzTarget).send({ method, path, body: bytes, headers, ...way });
          if (answeredBeforeSchema(res, bytes, way.contentType)) return;
          if (issueOf((parseLikeServer(bytes) as { value: unknown }).value)) return assertError(res, 400, ['invalid_body']);
          // A body the schema accepts may still break a rule only the service knows (a taken slug, an unknown time zone).
          if (res.status >= 400) assertError(res, res.status, ['invalid_body', 'slug_taken', 'member_exists', 'last_owner']);
        });
        await fc.assert(property, { ...fuzzParameters, numRuns: Math.ceil(fuzzRuns / 4) });
      });
    }
  });

  describe('GET endpoints, with every kind of credential and stray input', () => {
    /** Authorization headers built around the key format, each with the answer it must get. */
    async function credentials(tenant: Tenant) {
      const revoked = await issueKey(ctx.db, tenant.appId);
      await revokeKey(ctx.db, revoked.id);
      const expired = await issueExpiredKey(ctx.db, tenant.appId);
      const unpaid = await createTenant(ctx.db);
      await setPlan(ctx.db, unpaid.orgId, { apiEnabled: false });
      const key = tenant.key;
      const malformed = (value: string) => ({ value, status: 401, code: 'invalid_key' as ErrorCode });
      const missing = (value: string) => ({ value, status: 401, code: 'missing_authorization' as ErrorCode });
      const latin1 = fc
        .integer({ min: 0x20, max: 0xff })
        .filter((c) => c !== 0x7f)
        .map((c) => String.fromCharCode(c));
      return fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .constantFrom(`Bearer ${key}`, `bearer ${key}`, `Bearer \t${key} `)
            .map((value) => ({ value, status: 200, code: undefined })),
        },
        fc.constantFrom(
          malformed(`Bearer ${key.slice(0, -1)}`),
          malformed(`Bearer ${key}x`),
          malformed(`Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`),
          malformed(`Bearer svc_test_${key.slice(9)}`),
          malformed(`Bearer ${key.toUpperCase()}`),
          malformed(`Bearer ${key.slice(0, 9)}${'\u00e9'.repeat(43)}`),
          missing(key),
          missing(`Basic ${key}`),
          missing('Bearer'),
          missing('Bearer '),
          missing(''),
          missing(`Bearer ${key} ${key}`),
          { value: `Bearer ${revoked.key}`, status: 401, code: 'key_revoked' as ErrorCode },
          { value: `Bearer ${expired.key}`, status: 401, code: 'key_expired' as ErrorCode },
          { value: `Bearer ${unpaid.key}`, status: 402, code: 'plan_disabled' as ErrorCode },
        ),
        fc.string({ unit: latin1, maxLength: 8000 }).map((value) => ({ value, status: 401, code: undefined })),
      );
    }

    /** Sometimes a query string or a body, which GET endpoints do not take. */
    const strays = fc.record({
      query: fc.option(fc.constantFrom('?x=1', '?__proto__[polluted]=1', '?a=%ZZ', '?' + 'q'.repeat(4000)), { nil: '' }),
      body: fc.option(
        fc.oneof(
          fc.jsonValue().map((v) => encodeJson(v)),
          fc.constantFrom(Buffer.from('{"unterminated'), Buffer.from('[[[[[')),
        ),
        { nil: undefined },
      ),
      contentType: fc.constantFrom('application/json', 'text/plain'),
    });

    for (const path of [PING, STATISTICS]) {
      it(`GET ${path}: never a 5xx, every answer in the contract, each credential answered as documented`, async () => {
        const whitelist = sampleTypeNames(10);
        const tenant = await createTenant(ctx.db, { allowed: whitelist });
        const [body] = fc.sample(manifests(tenant.slug, whitelist), { numRuns: 1, seed: fuzzSeed });
        await storeManifest(tenant, body);
        const manifest = (await (target as FuzzTarget).send({ method: 'GET', path: STATISTICS, authorization: `Bearer ${tenant.key}` }))
          .body.statistics;
        const expected = (answer: Record<string, unknown>) =>
          path === PING
            ? assert.deepEqual(
                [answer.organizationId, (answer.app as { id: string }).id, (answer.app as { slug: string }).slug],
                [tenant.orgId, tenant.appId, tenant.slug],
              )
            : assert.deepEqual(answer.statistics, manifest);

        const property = fc.asyncProperty(await credentials(tenant), strays, async (credential, stray) => {
          const res = await (target as FuzzTarget).send({
            method: 'GET',
            path: path + stray.query,
            authorization: credential.value,
            body: stray.body,
            contentType: stray.body && stray.contentType,
          });
          if (credential.status !== 200) {
            assert.equal(res.status, credential.status, res.text);
            if (credential.code) assert.equal((res.body.error as { code: string }).code, credential.code);
            return;
          }
          if (stray.query || stray.body) {
            assert.ok([200, 400, 415].includes(res.status), res.text);
            return;
          }
          assert.equal(res.status, 200, res.text);
          expected(res.body);
        });
        await fc.assert(property, fuzzParameters);
      });
    }
  });

  describe('Console GET endpoints, with query and path parameters generated from their schemas', () => {
    // The export is left out: its CSV or NDJSON body is not one JSON value, which the fuzz target parses every answer as.
    const consoleReads = [
      '/api/v1/console/timeline',
      '/api/v1/console/timeline/workers',
      '/api/v1/console/workers',
      '/api/v1/console/workers/{workerId}',
      '/api/v1/console/workers/{workerId}/snapshots',
    ];
    const stray = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.constantFrom('', '0', '-1', '201', '1e400', 'null', '2026-02-30T10:00:00Z', '2026-11-20T10:00:00', '__proto__', 'a.b', '%ZZ'),
    );
    const parameterOf = (node: Schema): Schema =>
      typeof node.$ref === 'string' ? (doc.components.parameters[node.$ref.split('/').pop() as string] as Schema) : node;

    for (const template of consoleReads) {
      it(`GET ${template}: never a 5xx, every answer in the contract, bad parameters answered 400 invalid_query`, async () => {
        const tenant = await createTenant(ctx.db);
        const workerId = (await addWorker(ctx.db, { orgId: tenant.orgId, email: 'fuzz-console@directory.example' })).id;
        const { cookie } = await signIn(ctx.app, ctx.db, { orgId: tenant.orgId });
        const parameters = ((doc.paths[template] as Schema).get.parameters as Schema[]).map(parameterOf);
        // A date (YYYY-MM-DD) has no generator of its own.
        const days = fc
          .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
          .map((d) => d.toISOString().slice(0, 10));
        const arbitraries = new SchemaArbitraries(model, { overrides: { day: days } });
        // Text that a URL can carry: lone surrogates have no UTF-8 form (a UTF-8 round trip replaces them).
        const wellFormed = (v: unknown) => Buffer.from(String(v), 'utf8').toString('utf8');
        const value = (name: string, schema: Schema) =>
          fc.oneof({ weight: 3, arbitrary: arbitraries.valid(schema, [name]).map(wellFormed) }, stray);
        const query = fc.record(
          Object.fromEntries(
            parameters
              .filter((p) => p.in === 'query')
              .map((p) => [p.name as string, fc.option(value(p.name as string, p.schema as Schema), { nil: undefined })]),
          ),
        );
        const pathId = fc.oneof(
          fc.constant(workerId),
          arbitraries.valid(model.named('WorkerId')).map(wellFormed),
          stray.filter((v) => v !== ''),
        );
        const unknown = fc.option(fc.constantFrom('colour=red', '__proto__[polluted]=1', 'limit=1&limit=2'), { nil: undefined });
        const property = fc.asyncProperty(query, pathId, unknown, fc.boolean(), async (params, id, extra, encode) => {
          const pairs = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
          const text = pairs.map(([k, v]) => `${k}=${encode ? encodeURIComponent(v) : encodeURI(v).replace(/[#&]/g, encodeURIComponent)}`);
          if (extra) text.push(extra);
          const path = template.replace('{workerId}', encodeURIComponent(id)) + (text.length ? `?${text.join('&')}` : '');
          const res = await (target as FuzzTarget).send({ method: 'GET', path, headers: { cookie } });
          assert.ok([200, 400, 404].includes(res.status), `${path}: ${res.status} ${res.text.slice(0, 500)}`);
          if (res.status === 400) assert.equal((res.body.error as { code: string }).code, 'invalid_query', res.text);
          if (res.status === 404)
            assert.equal(
              (res.body.error as { code: string }).code,
              template.includes('{workerId}') ? 'worker_not_found' : 'not_found',
              res.text,
            );
        });
        // Each case is a database read: a tenth of FUZZ_RUNS keeps the six endpoints within a minute or so.
        await fc.assert(property, { ...fuzzParameters, numRuns: Math.max(50, Math.floor(fuzzRuns / 10)) });
      });
    }
  });
});

import assert from 'node:assert/strict';
import request from 'supertest';
import { addWorker, changeAllowedEventTypes } from '../src/domain/administration';
import { client } from './support/client';
import { event, metadataOfSize } from './support/events';
import { setup } from './support/fixtures';

const EVENTS = '/api/v1/ingest/events';

async function rowsOf(db: Awaited<ReturnType<typeof setup>>['db'], orgId: string) {
  return db.kysely.selectFrom('events').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
}

describe('POST /api/v1/ingest/events', () => {
  describe('acceptance', () => {
    it('answers 202 with every event accepted, ids and UTC timestamps, and stores them as custom:<slug> rows', async () => {
      const { app, db, tenant } = await setup();
      const events = [
        event({ actor: { externalId: 'u-1', displayName: 'Dana' }, duration: 60, pillar: 'DELIVERY', metadata: { ticket: 'OPS-1' } }),
        event({ eventType: 'build.finished', category: 'CODE_CHANGE', timestamp: '2026-11-20T10:00:00Z', actor: { externalId: 'u-1' } }),
      ];
      const res = await client(app).post(EVENTS, { key: tenant.key, body: { events } });
      assert.equal(res.status, 202);
      assert.equal(res.body.accepted, 2);
      assert.equal(res.body.rejected, 0);
      assert.equal(res.body.batchLimit, 500);
      assert.equal(res.body.requestId, res.headers['x-request-id']);
      assert.deepEqual(res.body.results.rejected, []);
      assert.deepEqual(
        res.body.results.accepted.map((a: { eventType: string; timestamp: string }) => [a.eventType, a.timestamp]),
        [
          ['ticket.resolved', '2026-11-20T13:03:11.000Z'],
          ['build.finished', '2026-11-20T10:00:00.000Z'],
        ],
      );

      const rows = await rowsOf(db, tenant.orgId);
      assert.equal(rows.length, 2);
      const first = rows.find((r) => r.id === res.body.results.accepted[0].id);
      assert.ok(first);
      assert.equal(first.integration_id, `custom:${tenant.slug}`);
      assert.equal(first.kind, 'event');
      assert.equal(first.category, 'TASK_UPDATE');
      assert.equal(first.ts, '2026-11-20T13:03:11.000Z');
      assert.equal(first.duration, 60);
      assert.equal(first.pillar, 'DELIVERY');
      assert.deepEqual(JSON.parse(first.metadata as string), { ticket: 'OPS-1' });
      assert.equal(first.request_id, res.body.requestId);
      assert.ok(!Number.isNaN(Date.parse(first.received_at)));
      assert.equal(rows[0]?.worker_id, rows[1]?.worker_id, 'grouped per worker');
    });

    it('defaults the timestamp to the time of receipt', async () => {
      const { app, tenant } = await setup();
      const before = Date.now();
      const res = await client(app).post(EVENTS, { key: tenant.key, body: { events: [event({ timestamp: undefined })] } });
      assert.equal(res.status, 202);
      const ts = Date.parse(res.body.results.accepted[0].timestamp);
      assert.ok(ts >= before - 5 && ts <= Date.now() + 5);
    });
  });

  describe('each rejection alone: the all-rejected status is that of its code', () => {
    const cases: Array<[string, Record<string, unknown>, number, string, RegExp]> = [
      ['a schema violation', { duration: -1 }, 400, 'invalid_body', /\/events\/0\/duration must be >= 0/],
      [
        'an actor with no identifying field',
        { actor: { displayName: 'Nobody' } },
        400,
        'missing_actor',
        /\/events\/0\/actor must have at least one of workerId, externalId, email/,
      ],
      ['no actor at all', { actor: undefined }, 400, 'missing_actor', /\/events\/0\/actor/],
      [
        'an eventType off the whitelist',
        { eventType: 'deploy.done' },
        403,
        'forbidden_event_type',
        /\/events\/0\/eventType "deploy\.done"/,
      ],
      [
        'an unknown workerId',
        { actor: { workerId: 'wkr_000000000nothing' } },
        404,
        'worker_not_found',
        /\/events\/0\/actor\/workerId "wkr_000000000nothing"/,
      ],
      [
        'an unknown statisticId',
        { statisticId: 'app.nothing' },
        400,
        'invalid_body',
        /\/events\/0\/statisticId "app\.nothing" is not in the app's statistic manifest/,
      ],
      // PostgreSQL text cannot hold U+0000: refused on every database alike, never a 500.
      [
        'a NUL in externalId',
        { actor: { externalId: 'a\u0000b' } },
        400,
        'invalid_body',
        /\/events\/0\/actor\/externalId must match pattern/,
      ],
      [
        'a NUL in displayName',
        { actor: { externalId: 'nul-name', displayName: '\u0000' } },
        400,
        'invalid_body',
        /\/events\/0\/actor\/displayName must match pattern/,
      ],
      ['a NUL in workerId', { actor: { workerId: 'wkr_\u0000' } }, 400, 'invalid_body', /\/events\/0\/actor\/workerId must match pattern/],
    ];
    for (const [what, overrides, status, code, message] of cases) {
      it(`${what}: ${status} ${code}, with the index in the body`, async () => {
        const { app, db, tenant } = await setup();
        const res = await client(app).post(EVENTS, { key: tenant.key, body: { events: [event(overrides)] } });
        assert.equal(res.status, status);
        assert.equal(res.body.error.code, code);
        assert.match(res.body.error.message, message);
        assert.equal(res.body.accepted, 0);
        assert.equal(res.body.rejected, 1);
        assert.deepEqual(res.body.results.accepted, []);
        assert.equal(res.body.results.rejected[0].index, 0);
        assert.equal(res.body.results.rejected[0].code, code);
        assert.match(res.body.results.rejected[0].message, message);
        assert.equal((await rowsOf(db, tenant.orgId)).length, 0);
      });
    }

    it('uses the status of the FIRST rejected event when they differ', async () => {
      const { app, tenant } = await setup();
      const res = await client(app).post(EVENTS, {
        key: tenant.key,
        body: { events: [event({ eventType: 'deploy.done' }), event({ duration: 1.5 })] },
      });
      assert.equal(res.status, 403);
      assert.equal(res.body.error.code, 'forbidden_event_type');
      assert.deepEqual(
        res.body.results.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
        [
          [0, 'forbidden_event_type'],
          [1, 'invalid_body'],
        ],
      );
    });
  });

  it('in a mixed batch answers 207 and gives each rejected index with its code; only accepted events are stored', async () => {
    const { app, db, tenant } = await setup();
    const events = [
      event(),
      event({ eventType: 'deploy.done' }),
      event(),
      event({ actor: { email: 'not-an-email' } }),
      event({ actor: {} }),
      event({ actor: { workerId: 'wkr_000000000nothing' } }),
      'not an event',
      event({ unknownField: true }),
      event(),
    ];
    const res = await client(app).post(EVENTS, { key: tenant.key, body: { events } });
    assert.equal(res.status, 207);
    assert.equal(res.body.accepted, 3);
    assert.equal(res.body.rejected, 6);
    assert.equal(res.body.accepted + res.body.rejected, events.length);
    assert.deepEqual(
      res.body.results.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
      [
        [1, 'forbidden_event_type'],
        [3, 'invalid_body'],
        [4, 'missing_actor'],
        [5, 'worker_not_found'],
        [6, 'invalid_body'],
        [7, 'invalid_body'],
      ],
    );
    assert.match(res.body.results.rejected[5].message, /\/events\/7 must not have the property "unknownField"/);
    assert.equal((await rowsOf(db, tenant.orgId)).length, 3);
  });

  describe('boundaries', () => {
    it('eventType of 3 and 64 chars is accepted; 2 and 65 are invalid_body', async () => {
      const three = 'a.b';
      const sixtyFour = `a${'b'.repeat(62)}c`;
      const { app, db, tenant } = await setup();
      await changeAllowedEventTypes(db, tenant.appId, [three, sixtyFour], true);
      const res = await client(app).post(EVENTS, {
        key: tenant.key,
        body: {
          events: [
            event({ eventType: three }),
            event({ eventType: sixtyFour }),
            event({ eventType: 'ab' }),
            event({ eventType: `${sixtyFour}d` }),
          ],
        },
      });
      assert.equal(res.status, 207);
      assert.deepEqual(
        res.body.results.accepted.map((a: { eventType: string }) => a.eventType),
        [three, sixtyFour],
      );
      assert.deepEqual(
        res.body.results.rejected.map((r: { index: number; code: string }) => [r.index, r.code]),
        [
          [2, 'invalid_body'],
          [3, 'invalid_body'],
        ],
      );
      assert.match(res.body.results.rejected[0].message, /\/events\/2\/eventType must match pattern/);
    });

    it('duration 0 and 86400 are accepted; 86401 and 1.5 are invalid_body', async () => {
      const { app, tenant } = await setup();
      const res = await client(app).post(EVENTS, {
        key: tenant.key,
        body: { events: [event({ duration: 0 }), event({ duration: 86400 }), event({ duration: 86401 }), event({ duration: 1.5 })] },
      });
      assert.equal(res.status, 207);
      assert.equal(res.body.accepted, 2);
      assert.deepEqual(
        res.body.results.rejected.map((r: { index: number; message: string }) => [r.index, r.message]),
        [
          [2, '/events/2/duration must be <= 86400'],
          [3, '/events/3/duration must be integer'],
        ],
      );
    });

    it('metadata of exactly 16 KB serialized is accepted; one byte more is invalid_body', async () => {
      const { app, tenant } = await setup();
      const res = await client(app).post(EVENTS, {
        key: tenant.key,
        body: { events: [event({ metadata: metadataOfSize(16384) }), event({ metadata: metadataOfSize(16385) })] },
      });
      assert.equal(res.status, 207);
      assert.equal(res.body.results.rejected[0].index, 1);
      assert.match(res.body.results.rejected[0].message, /\/events\/1\/metadata must be at most 16384 bytes when serialized as JSON/);
    });

    it('metadata is measured in UTF-8 bytes, not characters: 16 KB of two-byte characters is the limit', async () => {
      const { app, tenant } = await setup();
      // {"pad":"é…"}: 10 bytes besides the 8,187 two-byte characters, 16,384 bytes in 8,197 characters.
      const atLimit = { pad: 'é'.repeat(8187) };
      const over = { pad: `${'é'.repeat(8187)}x` };
      assert.equal(Buffer.byteLength(JSON.stringify(atLimit)), 16384);
      const res = await client(app).post(EVENTS, {
        key: tenant.key,
        body: { events: [event({ metadata: atLimit }), event({ metadata: over })] },
      });
      assert.equal(res.status, 207);
      assert.deepEqual(
        res.body.results.rejected.map((r: { index: number }) => r.index),
        [1],
      );
      assert.match(res.body.results.rejected[0].message, /\/events\/1\/metadata must be at most 16384 bytes when serialized as JSON/);
    });

    it('a batch at INGEST_BATCH_LIMIT is accepted; one more is 413 batch_too_large and nothing is stored', async () => {
      const { app, db, tenant } = await setup({ INGEST_BATCH_LIMIT: '100' });
      const api = client(app);
      const atLimit = await api.post(EVENTS, { key: tenant.key, body: { events: Array.from({ length: 100 }, () => event()) } });
      assert.equal(atLimit.status, 202);
      assert.equal(atLimit.body.batchLimit, 100);
      const over = await api.post(EVENTS, { key: tenant.key, body: { events: Array.from({ length: 101 }, () => event()) } });
      assert.equal(over.status, 413);
      assert.equal(over.body.error.code, 'batch_too_large');
      assert.match(over.body.error.message, /101 events; the limit is 100/);
      assert.equal((await rowsOf(db, tenant.orgId)).length, 100);
    });

    it('a body just under 1 MB is accepted; just over is 413 batch_too_large', async () => {
      const { app, tenant } = await setup();
      const events = Array.from({ length: 100 }, () => event({ metadata: metadataOfSize(10_000) }));
      const base = JSON.stringify({ events }).length;
      const pad = (bytes: number) => {
        const padded = structuredClone(events);
        (padded[0] as { metadata: Record<string, string> }).metadata.pad += 'x'.repeat(bytes - base);
        return JSON.stringify({ events: padded });
      };
      const under = pad(1024 * 1024);
      assert.equal(Buffer.byteLength(under), 1024 * 1024);
      const send = (body: string) =>
        request(app).post(EVENTS).set('Authorization', `Bearer ${tenant.key}`).set('Content-Type', 'application/json').send(body);
      const ok = await send(under);
      // The padded event breaks the 16 KB metadata rule, the others are accepted: the body itself was read.
      assert.equal(ok.status, 207);
      assert.equal(ok.body.accepted, 99);
      const tooBig = await send(pad(1024 * 1024 + 1));
      assert.equal(tooBig.status, 413);
      assert.equal(tooBig.body.error.code, 'batch_too_large');
    });
  });

  describe('timestamps', () => {
    const cases: Array<[string, string | undefined]> = [
      ['2026-11-20T14:03:11Z', '2026-11-20T14:03:11.000Z'],
      ['2026-11-20T14:03:11+02:00', '2026-11-20T12:03:11.000Z'],
      ['2026-11-20T14:03:11.123-05:30', '2026-11-20T19:33:11.123Z'],
      ['2026-11-20 14:03:11Z', '2026-11-20T14:03:11.000Z'],
      ['2026-11-20T14:03:11', undefined],
      // Whitespace the date-time format alone would take for the separator (found by the fuzzer).
      ['2026-11-20\uFEFF14:03:11Z', undefined],
      ['2026-11-20\t14:03:11Z', undefined],
      ['2026-11-20', undefined],
      ['2026-02-31T10:00:00Z', undefined],
      ['2026-11-20T25:00:00Z', undefined],
      ['yesterday', undefined],
    ];
    for (const [input, stored] of cases) {
      it(`${input} is ${stored ? `accepted as ${stored}` : 'invalid_body'}`, async () => {
        const { app, tenant } = await setup();
        const res = await client(app).post(EVENTS, { key: tenant.key, body: { events: [event(), event({ timestamp: input })] } });
        if (stored) {
          assert.equal(res.status, 202);
          assert.equal(res.body.results.accepted[1].timestamp, stored);
        } else {
          assert.equal(res.status, 207);
          assert.equal(res.body.results.rejected[0].code, 'invalid_body');
          assert.match(res.body.results.rejected[0].message, /\/events\/1\/timestamp must be an ISO 8601 date-time with a timezone offset/);
        }
      });
    }
  });

  it('refuses a timestamp whose UTC instant leaves the years 0000 to 9999, and accepts the first and last instants', async () => {
    const { app, tenant } = await setup();
    const timestamps = ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '0000-01-01T00:00:00+00:01', '9999-12-31T23:59:59-00:01'];
    const res = await client(app).post(EVENTS, { key: tenant.key, body: { events: timestamps.map((timestamp) => event({ timestamp })) } });
    assert.equal(res.status, 207);
    assert.deepEqual(
      res.body.results.accepted.map((a: { timestamp: string }) => a.timestamp),
      ['0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'],
    );
    assert.deepEqual(
      res.body.results.rejected.map((r: { index: number; code: string; message: string }) => [r.index, r.code, r.message]),
      [2, 3].map((i) => [i, 'invalid_body', `/events/${i}/timestamp is not a real point in time within the years 0000 to 9999 (UTC)`]),
    );
  });

  describe('the envelope', () => {
    const cases: Array<[string, unknown, number, string]> = [
      ['no events', {}, 400, 'invalid_body'],
      ['events not an array', { events: { a: 1 } }, 400, 'invalid_body'],
      ['an empty batch', { events: [] }, 400, 'invalid_body'],
      ['a property beside events', { events: [event()], extra: 1 }, 400, 'invalid_body'],
      ['a bare array', [event()], 400, 'invalid_body'],
    ];
    for (const [what, body, status, code] of cases) {
      it(`${what}: ${status} ${code}`, async () => {
        const { app, db, tenant } = await setup();
        const res = await client(app).post(EVENTS, { key: tenant.key, body });
        assert.equal(res.status, status);
        assert.equal(res.body.error.code, code);
        assert.equal((await rowsOf(db, tenant.orgId)).length, 0);
      });
    }

    it('malformed JSON: 400 invalid_body', async () => {
      const { app, tenant } = await setup();
      const res = await request(app)
        .post(EVENTS)
        .set('Authorization', `Bearer ${tenant.key}`)
        .set('Content-Type', 'application/json')
        .send('{"events": [');
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'invalid_body');
      assert.match(res.body.error.message, /not valid JSON/);
    });

    it('a non-JSON content type: 415 unsupported_media_type', async () => {
      const { app, tenant } = await setup();
      const res = await client(app).post(EVENTS, { key: tenant.key, headers: { 'Content-Type': 'text/plain' }, body: 'events' });
      assert.equal(res.status, 415);
      assert.equal(res.body.error.code, 'unsupported_media_type');
    });

    it('authenticates before reading the body: a bad key with a bad body is 401', async () => {
      const { app } = await setup();
      const res = await request(app).post(EVENTS).set('Content-Type', 'application/json').send('{not json');
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'missing_authorization');
    });
  });

  describe('categories', () => {
    it('accepts only the active set (A here): a set-B value is invalid_body', async () => {
      const { app, tenant } = await setup({ EVENT_CATEGORY_SET: 'A' });
      const res = await client(app).post(EVENTS, {
        key: tenant.key,
        body: { events: [event({ category: 'code' }), event({ category: 'CODE_CHANGE' })] },
      });
      assert.equal(res.status, 207);
      assert.equal(res.body.results.rejected[0].index, 1);
      assert.match(res.body.results.rejected[0].message, /\/events\/1\/category must be one of communication, project_management, code/);
    });
  });

  describe('storage', () => {
    it('matches a directory worker by email, case-insensitively', async () => {
      const { app, db, tenant } = await setup();
      const { id } = await addWorker(db, { orgId: tenant.orgId, email: 'Dana@Acme.example', name: 'Dana' });
      const res = await client(app).post(EVENTS, { key: tenant.key, body: { events: [event({ actor: { email: 'dana@ACME.example' } })] } });
      assert.equal(res.status, 202);
      assert.equal((await rowsOf(db, tenant.orgId))[0]?.worker_id, id);
    });

    it('stores the metadata as the very JSON its size was checked on, escapes and all, for a worker it knows', async () => {
      const { app, db, tenant } = await setup();
      const { id } = await addWorker(db, { orgId: tenant.orgId, email: 'dana@acme.example', name: 'Dana' });
      // A worker that exists: on PostgreSQL the batch is stored by its one statement, which takes the metadata as
      // one text, the JSON texts joined by U+0001, each kept as it came (jsonb would refuse the \u0000 and the lone
      // surrogate below), and no metadata as an empty piece. JSON escapes a U+0001 of the metadata's own.
      const escaped = { 'quote"d': 'a\\b "c"\n\t/ é 😀', nested: { list: [1.5, -0, 1e21, 5e-7, true, null, {}, []] }, ' spaced ': '' };
      const unicodeEscaped = { nul: '\u0000', separator: '\u0001', bell: '\u0007', lone: '\ud800', backslashU: '\\u0041' };
      // As deep as a body may nest (64 levels, the body's own three among them).
      let deepest: Record<string, unknown> = { depth: 61 };
      for (let level = 60; level > 0; level--) deepest = { level, inner: deepest };
      const events = [escaped, undefined, unicodeEscaped, deepest].map((metadata) => event({ actor: { workerId: id }, metadata }));
      const res = await client(app).post(EVENTS, { key: tenant.key, body: { events } });
      assert.equal(res.status, 202);
      const byId = new Map((await rowsOf(db, tenant.orgId)).map((r) => [r.id, r.metadata]));
      assert.deepEqual(
        res.body.results.accepted.map((a: { id: string }) => byId.get(a.id)),
        [JSON.stringify(escaped), null, JSON.stringify(unicodeEscaped), JSON.stringify(deepest)],
      );
    });

    it('stores no metadata for an event without any, alone in its batch or last in it, for a worker it knows', async () => {
      const { app, db, tenant } = await setup();
      const { id } = await addWorker(db, { orgId: tenant.orgId, email: 'dana@acme.example', name: 'Dana' });
      // On PostgreSQL the metadata text of a batch of one event without any is empty, and split into no piece at all.
      const batches = [[undefined], [{ first: 1 }, undefined], [undefined, undefined]];
      const stored: unknown[][] = [];
      for (const batch of batches) {
        const events = batch.map((metadata) => event({ actor: { workerId: id }, metadata }));
        const res = await client(app).post(EVENTS, { key: tenant.key, body: { events } });
        assert.equal(res.status, 202);
        const byId = new Map((await rowsOf(db, tenant.orgId)).map((r) => [r.id, r.metadata]));
        stored.push(res.body.results.accepted.map((a: { id: string }) => byId.get(a.id)));
      }
      assert.deepEqual(stored, [[null], ['{"first":1}', null], [null, null]]);
    });
  });
});

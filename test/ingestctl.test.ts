import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { runIngestctl } from '../src/cli/ingestctl';
import { createApp } from '../src/app';
import { client } from './support/client';
import { freshDatabaseConfig } from './support/database';
import { databaseUrlOf, silentLogger, testConfig } from './support/fixtures';
import { openDatabase } from '../src/data/db';
import type { DatabaseConfig } from '../src/config';

describe('ingestctl', () => {
  let env: Record<string, string>;
  let databaseConfig: DatabaseConfig;

  before(async () => {
    databaseConfig = await freshDatabaseConfig();
    env = { DATABASE_URL: databaseUrlOf(databaseConfig) };
  });

  async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runIngestctl(argv, { env, out: (t) => (out += t), err: (t) => (err += t) });
    return { code, out, err };
  }

  async function json(...argv: string[]): Promise<Record<string, unknown>> {
    const result = await run(...argv, '--json');
    assert.equal(result.code, 0, result.err);
    const lines = result.out.trim().split('\n');
    assert.equal(lines.length, 1, 'exactly one JSON object');
    return JSON.parse(lines[0] as string);
  }

  async function refused(pattern: RegExp, ...argv: string[]): Promise<void> {
    const result = await run(...argv, '--json');
    assert.notEqual(result.code, 0);
    assert.equal(result.out, '', 'nothing on stdout when refused');
    assert.match(result.err, pattern);
  }

  async function organization() {
    const org = await json('org', 'create', '--name', 'Acme');
    await json('member', 'add', '--org', String(org.id), '--email', 'Owner@Acme.example', '--role', 'owner');
    const app = await json(
      'app',
      'create',
      '--org',
      String(org.id),
      '--slug',
      'acme-ci',
      '--name',
      'Acme CI',
      '--as',
      'owner@acme.example',
    );
    return { orgId: String(org.id), appId: String(app.id) };
  }

  it('org create prints { id } and org set-plan prints the plan', async () => {
    const org = await json('org', 'create', '--name', 'Acme', '--max-events-per-month', '1000', '--api', 'disabled');
    assert.deepEqual(Object.keys(org), ['id']);
    assert.match(String(org.id), /^org_/);
    assert.deepEqual(await json('org', 'set-plan', '--org', String(org.id), '--api', 'enabled'), {
      id: org.id,
      maxEventsPerMonth: 1000,
      api: 'enabled',
    });
    assert.deepEqual(await json('org', 'set-plan', '--org', String(org.id), '--max-events-per-month', 'unlimited'), {
      id: org.id,
      maxEventsPerMonth: null,
      api: 'enabled',
    });
  });

  it('refuses bad organization input', async () => {
    await refused(/max-events-per-month/, 'org', 'create', '--name', 'X', '--max-events-per-month', '-5');
    await refused(/--api/, 'org', 'create', '--name', 'X', '--api', 'maybe');
    await refused(/--name/, 'org', 'create');
    await refused(/no organization/, 'org', 'set-plan', '--org', 'org_missing', '--api', 'enabled');
  });

  it('member add prints { id } and refuses bad roles, bad emails and duplicates', async () => {
    const org = await json('org', 'create', '--name', 'Acme');
    const member = await json('member', 'add', '--org', String(org.id), '--email', 'a@acme.example', '--role', 'admin', '--name', 'Ada');
    assert.match(String(member.id), /^mem_/);
    await refused(/role/, 'member', 'add', '--org', String(org.id), '--email', 'b@acme.example', '--role', 'boss');
    await refused(/not a valid email/, 'member', 'add', '--org', String(org.id), '--email', 'nope', '--role', 'admin');
    await refused(/already a member/, 'member', 'add', '--org', String(org.id), '--email', 'A@acme.example', '--role', 'admin');
  });

  it('app create prints { id, slug } for an owner or admin and refuses a plain member', async () => {
    const { orgId } = await organization();
    await json('member', 'add', '--org', orgId, '--email', 'admin@acme.example', '--role', 'admin');
    await json('member', 'add', '--org', orgId, '--email', 'member@acme.example', '--role', 'member');
    const created = await json('app', 'create', '--org', orgId, '--slug', 'tickets', '--name', 'Tickets', '--as', 'admin@acme.example');
    assert.equal(created.slug, 'tickets');
    assert.match(String(created.id), /^app_/);
    await refused(
      /requires an owner or admin/,
      'app',
      'create',
      '--org',
      orgId,
      '--slug',
      'other',
      '--name',
      'O',
      '--as',
      'member@acme.example',
    );
    await refused(/not a member/, 'app', 'create', '--org', orgId, '--slug', 'other', '--name', 'O', '--as', 'stranger@acme.example');
    await refused(/already used/, 'app', 'create', '--org', orgId, '--slug', 'tickets', '--name', 'T', '--as', 'admin@acme.example');
  });

  it('app create enforces the slug rule: 2 to 40 chars of [a-z0-9-], starting with a letter', async () => {
    const { orgId } = await organization();
    const as = ['--as', 'owner@acme.example'];
    assert.equal((await json('app', 'create', '--org', orgId, '--slug', 'ab', '--name', 'N', ...as)).slug, 'ab');
    assert.equal(
      (await json('app', 'create', '--org', orgId, '--slug', `a${'b'.repeat(39)}`, '--name', 'N', ...as)).slug,
      `a${'b'.repeat(39)}`,
    );
    for (const slug of ['a', `a${'b'.repeat(40)}`, '1abc', 'Abc', 'a_b', '-ab']) {
      await refused(/slug/, 'app', 'create', '--org', orgId, '--slug', slug, '--name', 'N', ...as);
    }
  });

  it('app allow and disallow print { id, allowedEventTypes } and refuse invalid type names', async () => {
    const { appId } = await organization();
    assert.deepEqual(await json('app', 'allow', '--app', appId, 'ticket.resolved', 'build.finished', 'ticket.resolved'), {
      id: appId,
      allowedEventTypes: ['ticket.resolved', 'build.finished'],
    });
    assert.deepEqual(await json('app', 'disallow', '--app', appId, 'ticket.resolved'), {
      id: appId,
      allowedEventTypes: ['build.finished'],
    });
    await refused(/not a valid event type/, 'app', 'allow', '--app', appId, 'ab');
    const tooMany = Array.from({ length: 201 }, (_, i) => `type.${i}`);
    await refused(/allowedEventTypes must NOT have more than 200 items; this would be 20[1-9]/, 'app', 'allow', '--app', appId, ...tooMany);
    await refused(/no app/i, 'app', 'allow', '--app', 'app_missing', 'build.finished');
  });

  it('org set-timezone prints { id, timeZone } in the canonical spelling and refuses what is not an IANA zone', async () => {
    const { orgId } = await organization();
    assert.deepEqual(await json('org', 'set-timezone', '--org', orgId, '--time-zone', 'europe/berlin'), {
      id: orgId,
      timeZone: 'Europe/Berlin',
    });
    await refused(/not an IANA time zone/, 'org', 'set-timezone', '--org', orgId, '--time-zone', 'Mars/Olympus');
    await refused(/no organization/, 'org', 'set-timezone', '--org', 'org_missing', '--time-zone', 'UTC');
  });

  it('key issue prints { id, key, expiresAt } and key revoke prints { id, revokedAt }', async () => {
    const { appId } = await organization();
    const key = await json('key', 'issue', '--app', appId);
    assert.match(String(key.key), /^svc_live_[A-Za-z0-9_-]{43}$/);
    assert.equal(key.expiresAt, null);
    const expiring = await json('key', 'issue', '--app', appId, '--expires-at', '2030-01-01T00:00:00+02:00');
    assert.equal(expiring.expiresAt, '2029-12-31T22:00:00.000Z');
    const revoked = await json('key', 'revoke', '--key', String(key.id));
    assert.equal(revoked.id, key.id);
    assert.ok(!Number.isNaN(Date.parse(String(revoked.revokedAt))));
    await refused(/expiresAt/, 'key', 'issue', '--app', appId, '--expires-at', '2030-01-01');
    await refused(/no key/i, 'key', 'revoke', '--key', 'key_missing');
  });

  it('worker add prints { id } and refuses a duplicate email', async () => {
    const { orgId } = await organization();
    const worker = await json('worker', 'add', '--org', orgId, '--email', 'dana@acme.example', '--name', 'Dana');
    assert.match(String(worker.id), /^wkr_/);
    await refused(/already exists/, 'worker', 'add', '--org', orgId, '--email', 'DANA@acme.example');
  });

  it('quickstart creates everything needed and its key answers ping', async () => {
    const result = await json('quickstart');
    assert.match(String(result.curl), /^curl -s -H "Authorization: Bearer svc_live_[^"]+" http:\/\/localhost:3000\/api\/v1\/ingest\/ping$/);
    const db = openDatabase(databaseConfig);
    try {
      const config = testConfig({ config: databaseConfig });
      const res = await client(createApp(config, db, { logger: silentLogger })).get('/api/v1/ingest/ping', { key: String(result.key) });
      assert.equal(res.status, 200);
      assert.equal(res.body.app.id, result.appId);

      // Its owner's way into the console: the printed invite link sets a password and signs in.
      const invite = new URL(String(result.consoleInvite));
      assert.equal(invite.pathname, '/console/invite');
      const token = new URLSearchParams(invite.hash.slice(1)).get('token');
      const accepted = await client(createApp(config, db, { logger: silentLogger })).post('/api/v1/console/invites/accept', {
        body: { token, password: 'a quickstart password' },
      });
      assert.equal(accepted.status, 200);
      assert.equal(accepted.body.member.email, result.ownerEmail);
    } finally {
      await db.close();
    }
  });

  it('runs as bin/ingestctl with errors on stderr and a non-zero status', function () {
    this.timeout(30_000);
    const bin = path.join(__dirname, '..', 'bin', 'ingestctl');
    const ok = spawnSync(bin, ['org', 'create', '--name', 'Shell', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(JSON.parse(ok.stdout).id, /^org_/);
    const bad = spawnSync(bin, ['key', 'revoke', '--key', 'key_missing', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.notEqual(bad.status, 0);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /no key/i);
  });
});

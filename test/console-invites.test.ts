import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createApp } from '../src/app';
import { runIngestctl } from '../src/cli/ingestctl';
import { INVITE_VALIDITY_MS, inviteMember } from '../src/domain/sessions';
import * as administration from '../src/domain/administration';
import { client } from './support/client';
import { consoleOnOwnClock, createMember, sessionCookieOf, signIn } from './support/console';
import { databaseUrlOf, setup } from './support/fixtures';
import { sharedDatabase } from './support/database';

const INVITE = '/api/v1/console/invite';
const ACCEPT = '/api/v1/console/invites/accept';
const ME = '/api/v1/console/me';
const NEW_PASSWORD = 'a password set from the invite';

function tokenOf(url: string): string {
  const match = /#token=([A-Za-z0-9_-]{43})$/.exec(url);
  assert.ok(match, url);
  return match[1] as string;
}

async function invitedMember(db: Awaited<ReturnType<typeof setup>>['db'], orgId: string) {
  return administration.addMember(db, {
    orgId,
    email: `invited-${Math.random().toString(36).slice(2)}@example.com`,
    role: 'admin',
    name: 'Ivy',
  });
}

describe('Console invites', () => {
  it('links to the console from PUBLIC_URL, tells who it is for, and signs in once with the new password', async () => {
    const { app, db, config, tenant } = await setup({ PUBLIC_URL: 'https://ingest.example.com/' });
    const { id } = await invitedMember(db, tenant.orgId);
    const before = Date.now();
    const invite = await inviteMember(db, config, id);
    assert.equal(invite.id, id);
    assert.ok(invite.url.startsWith('https://ingest.example.com/console/invite#token='), invite.url);
    const expires = Date.parse(invite.expiresAt);
    assert.ok(expires >= before + INVITE_VALIDITY_MS && expires <= Date.now() + INVITE_VALIDITY_MS);
    const token = tokenOf(invite.url);

    const api = client(app);
    const shown = await api.get(INVITE, { headers: { 'X-Invite-Token': token } });
    assert.equal(shown.status, 200, shown.text);
    assert.deepEqual(shown.body.member, { email: shown.body.member.email, name: 'Ivy', role: 'admin' });
    assert.equal(shown.body.organization.id, tenant.orgId);
    assert.equal(shown.body.expiresAt, invite.expiresAt);

    const accepted = await api.post(ACCEPT, { body: { token, password: NEW_PASSWORD } });
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body.member.id, id);
    const session = client(app, { Cookie: sessionCookieOf(accepted) });
    assert.equal((await session.get(ME)).status, 200);
    const signedIn = await api.post('/api/v1/console/session', { body: { email: accepted.body.member.email, password: NEW_PASSWORD } });
    assert.equal(signedIn.status, 200, 'the password was set');

    for (const res of [
      await api.post(ACCEPT, { body: { token, password: 'another password again' } }),
      await api.get(INVITE, { headers: { 'X-Invite-Token': token } }),
    ]) {
      assert.equal(res.status, 400);
      assert.equal(res.body.error.code, 'invite_invalid', 'the link works once');
    }
  });

  it('a new invite voids the old one; unknown and expired tokens are invite_invalid and change nothing', async () => {
    const { app, db, config, tenant } = await setup();
    const { id } = await invitedMember(db, tenant.orgId);
    const old = tokenOf((await inviteMember(db, config, id)).url);
    const current = tokenOf((await inviteMember(db, config, id)).url);
    const api = client(app);
    const stale = await api.post(ACCEPT, { body: { token: old, password: NEW_PASSWORD } });
    assert.equal(stale.body.error.code, 'invite_invalid');
    const unknown = await api.post(ACCEPT, { body: { token: 'x'.repeat(43), password: NEW_PASSWORD } });
    assert.equal(unknown.body.error.code, 'invite_invalid');

    const expiredFor = await invitedMember(db, tenant.orgId);
    const longAgo = () => new Date(Date.now() - INVITE_VALIDITY_MS - 1000);
    const expired = tokenOf((await inviteMember(db, config, expiredFor.id, { now: longAgo })).url);
    const late = await api.post(ACCEPT, { body: { token: expired, password: NEW_PASSWORD } });
    assert.equal(late.status, 400);
    assert.equal(late.body.error.code, 'invite_invalid');
    const row = await db.kysely.selectFrom('members').select('password_hash').where('id', '=', expiredFor.id).executeTakeFirstOrThrow();
    assert.equal(row.password_hash, null, 'nothing was changed');

    const short = await api.post(ACCEPT, { body: { token: current, password: 'too short' } });
    assert.equal(short.status, 400);
    assert.equal(short.body.error.code, 'invalid_body');
    assert.match(short.body.error.message, /password/);
    assert.equal(
      (await api.post(ACCEPT, { body: { token: current, password: NEW_PASSWORD } })).status,
      200,
      'a refused attempt keeps the invite',
    );
  });

  it('accepting an invite ends the member’s other sessions', async () => {
    const { app, db, config } = await setup();
    const session = await signIn(app, db);
    const token = tokenOf((await inviteMember(db, config, session.memberId)).url);
    assert.equal((await client(app).post(ACCEPT, { body: { token, password: NEW_PASSWORD } })).status, 200);
    assert.equal((await session.console.get(ME)).status, 401);
  });

  it('sets Secure on the cookie when the request came over TLS', async () => {
    // Behind a TLS-terminating proxy that TRUST_PROXY names, X-Forwarded-Proto tells that the client used TLS.
    const { app, db } = await setup({ TRUST_PROXY: 'true' });
    const member = await createMember(db);
    const res = await client(app).post('/api/v1/console/session', {
      body: { email: member.email, password: member.password },
      headers: { 'X-Forwarded-Proto': 'https' },
    });
    assert.equal(res.status, 200);
    assert.match(
      [res.headers['set-cookie']].flat()[0] as string,
      /^ingest_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; Secure; SameSite=Strict$/,
    );
  });

  it('never logs a password, a session token, a CSRF token or an invite token', async () => {
    const { db, config, tenant } = await consoleOnOwnClock();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = createApp({ ...config, logLevel: 'info' }, db, { logger: pino({ level: 'trace' }, sink) });
    const api = client(app);
    const member = await createMember(db, { orgId: tenant.orgId });
    const wrong = await api.post('/api/v1/console/session', { body: { email: member.email, password: 'a wrong password 1' } });
    assert.equal(wrong.status, 401);
    const session = await signIn(app, db, { orgId: tenant.orgId });
    await session.console.get(ME);
    const { id } = await invitedMember(db, tenant.orgId);
    const token = tokenOf((await inviteMember(db, config, id)).url);
    await api.get(INVITE, { headers: { 'X-Invite-Token': token } });
    const accepted = await api.post(ACCEPT, { body: { token, password: NEW_PASSWORD } });
    await api.get(`${INVITE}/${token}`);
    await session.console.delete('/api/v1/console/session');

    const logged = lines.join('');
    assert.ok(lines.length >= 7, 'the requests were logged');
    const secrets = [member.password, 'a wrong password 1', NEW_PASSWORD, token, session.cookie.split('=')[1] as string, session.csrfToken];
    secrets.push(sessionCookieOf(accepted).split('=')[1] as string, accepted.body.csrfToken);
    for (const secret of secrets) assert.ok(!logged.includes(secret), `${secret.slice(0, 4)}… is not logged`);
  });
});

describe('ingestctl member set-password and invite', () => {
  async function run(argv: string[], stdin?: string) {
    const shared = await sharedDatabase();
    let out = '';
    let err = '';
    const code = await runIngestctl([...argv, '--json'], {
      env: { DATABASE_URL: databaseUrlOf(shared.config), PUBLIC_URL: 'https://console.example' },
      out: (t) => (out += t),
      err: (t) => (err += t),
      stdin: Readable.from(stdin === undefined ? [] : [stdin]),
    });
    return { code, out, err };
  }

  it('set-password reads the first line of standard input and ends the member’s sessions', async () => {
    const { app, db } = await setup();
    const session = await signIn(app, db);
    const result = await run(['member', 'set-password', '--member', session.memberId], 'a password from stdin\nignored second line\n');
    assert.equal(result.code, 0, result.err);
    assert.deepEqual(JSON.parse(result.out), { id: session.memberId });
    assert.equal((await session.console.get(ME)).status, 401);
    const res = await client(app).post('/api/v1/console/session', { body: { email: session.email, password: 'a password from stdin' } });
    assert.equal(res.status, 200);
  });

  it('set-password refuses an empty input, a short password and an unknown member', async () => {
    const { db, tenant } = await setup();
    const { id } = await invitedMember(db, tenant.orgId);
    for (const [argv, stdin, pattern] of [
      [['member', 'set-password', '--member', id], undefined, /no password on standard input/],
      [['member', 'set-password', '--member', id], 'short\n', /12 to 200 characters/],
      [['member', 'set-password', '--member', 'mem_nope'], 'long enough password\n', /no member mem_nope/],
      [['member', 'set-password', '--member', id, 'a password as argument'], 'long enough password\n', /too many arguments|unknown/i],
    ] as const) {
      const result = await run([...argv], stdin);
      assert.notEqual(result.code, 0);
      assert.equal(result.out, '');
      assert.match(result.err, pattern);
    }
  });

  it('invite prints the id, an absolute link from PUBLIC_URL and when it expires', async () => {
    const { app, db, tenant } = await setup();
    const { id } = await invitedMember(db, tenant.orgId);
    const result = await run(['member', 'invite', '--member', id]);
    assert.equal(result.code, 0, result.err);
    const printed = JSON.parse(result.out);
    assert.deepEqual(Object.keys(printed).sort(), ['expiresAt', 'id', 'url']);
    assert.equal(printed.id, id);
    assert.ok(printed.url.startsWith('https://console.example/console/invite#token='));
    const shown = await client(app).get(INVITE, { headers: { 'X-Invite-Token': tokenOf(printed.url) } });
    assert.equal(shown.status, 200);
    assert.equal(shown.body.expiresAt, printed.expiresAt);
    const unknown = await run(['member', 'invite', '--member', 'mem_nope']);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.err, /no member mem_nope/);
  });
});

import assert from 'node:assert/strict';
import { hashToken, passwordProblem, setPassword } from '../src/domain/sessions';
import { PasswordHasher } from '../src/domain/passwords';
import { client } from './support/client';
import { consoleOnOwnClock, createMember, sessionCookieOf, signIn, TEST_PASSWORD } from './support/console';
import { setup, silentLogger } from './support/fixtures';
import { createApp } from '../src/app';

const SESSION = '/api/v1/console/session';
const ME = '/api/v1/console/me';

/** The real hasher, noting the cost (`scrypt$N$r$p`) of every hash it verifies against. */
class WatchedHasher extends PasswordHasher {
  readonly verified: string[] = [];

  override async verify(password: string, stored: string): Promise<boolean> {
    this.verified.push(stored.split('$').slice(0, 4).join('$'));
    return super.verify(password, stored);
  }
}

describe('Console sessions', () => {
  it('sign-in answers the member, organization, memberships and a CSRF token, and sets the cookie', async () => {
    const { app, db } = await setup();
    const member = await createMember(db, { role: 'admin', name: 'Dana' });
    const res = await client(app).post(SESSION, { body: { email: member.email.toUpperCase(), password: member.password } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.member, { id: member.memberId, email: member.email, name: 'Dana', role: 'admin' });
    assert.equal(res.body.organization.id, member.orgId);
    assert.deepEqual(res.body.memberships, [{ organizationId: member.orgId, organizationName: res.body.organization.name, role: 'admin' }]);
    assert.match(res.body.csrfToken, /^[A-Za-z0-9_-]{43}$/);
    const cookie = [res.headers['set-cookie']].flat()[0] as string;
    assert.match(cookie, /^ingest_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  it('GET /me answers the same body as sign-in; no or unknown cookie is session_required', async () => {
    const { app, db } = await setup();
    const session = await signIn(app, db, { role: 'owner' });
    const me = await session.console.get(ME);
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.member.id, session.memberId);
    assert.equal(me.body.csrfToken, session.csrfToken);
    assert.equal(me.body.member.role, 'owner');
    assert.ok(me.headers['x-api-version']);
    const cookies: Array<Record<string, string>> = [
      {},
      { Cookie: 'ingest_session=nope' },
      { Cookie: `ingest_session=${'A'.repeat(43)}` },
      { Cookie: 'other=1' },
    ];
    for (const headers of cookies) {
      const res = await client(app).get(ME, { headers });
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'session_required');
    }
  });

  it('stores only the SHA-256 of the session token', async () => {
    const { app, db } = await setup();
    const session = await signIn(app, db);
    const token = session.cookie.slice('ingest_session='.length);
    const rows = await db.kysely.selectFrom('sessions').selectAll().where('member_id', '=', session.memberId).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.token_hash, hashToken(token));
    assert.ok(!JSON.stringify(rows).includes(token), 'the token itself is stored nowhere');
  });

  it('sign-out ends the session at once and clears the cookie; it needs the CSRF token', async () => {
    const { app, db } = await setup();
    const session = await signIn(app, db);
    const refused = await client(app, { Cookie: session.cookie }).delete(SESSION);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'csrf_failed');
    assert.equal((await session.console.get(ME)).status, 200, 'a refused sign-out changed nothing');
    const stale = await client(app, { Cookie: session.cookie, 'X-CSRF-Token': session.csrfToken.slice(0, -1) + 'x' }).delete(SESSION);
    assert.equal(stale.body.error.code, 'csrf_failed');

    const out = await session.console.delete(SESSION);
    assert.equal(out.status, 204);
    assert.match(
      [out.headers['set-cookie']].flat()[0] as string,
      /^ingest_session=; Path=\/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict$/,
    );
    const after = await session.console.get(ME);
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'session_required');
  });

  it('a password with a NUL never matches (scrypt would end it there) and cannot be set', async () => {
    const hasher = new PasswordHasher();
    const stored = await hasher.hash('correct horse battery staple');
    assert.equal(await hasher.verify('correct horse battery staple', stored), true);
    assert.equal(await hasher.verify('correct horse battery staple\u0000', stored), false);
    assert.equal(await hasher.verify('correct horse battery staple\u0000anything', stored), false);
    assert.match(passwordProblem('correct horse battery staple\u0000') ?? '', /U\+0000/);
    await assert.rejects(hasher.hash('correct horse\u0000 battery staple'));
  });

  it('a wrong password and an unknown email get the same answer after the same work', async () => {
    const passwords = new WatchedHasher();
    const verified = passwords.verified;
    const { app, db } = await consoleOnOwnClock({}, { passwords });
    const member = await createMember(db);
    const api = client(app, { Host: 'console.example' });
    const wrong = await api.post(SESSION, { body: { email: member.email, password: 'not the password at all' } });
    const wrongWork = verified.splice(0);
    const unknown = await api.post(SESSION, { body: { email: `nobody-${member.email}`, password: 'not the password at all' } });
    const unknownWork = verified.splice(0);
    for (const res of [wrong, unknown]) {
      assert.equal(res.status, 401);
      assert.equal(res.headers['set-cookie'], undefined);
    }
    const { requestId: _a, ...wrongError } = wrong.body.error;
    const { requestId: _b, ...unknownError } = unknown.body.error;
    assert.deepEqual(wrongError, unknownError);
    assert.equal(wrongError.code, 'invalid_credentials');
    assert.deepEqual(wrongWork, ['scrypt$16384$8$1']);
    assert.deepEqual(unknownWork, wrongWork, 'an unknown email is checked against a dummy hash of the same cost');
  });

  it('throttles more than 10 failures per email within 15 minutes, before checking the password', async () => {
    const passwords = new WatchedHasher();
    // Each attempt from another address (X-Forwarded-For, trusted): only the email's count can refuse.
    const { app, db, advance } = await consoleOnOwnClock({ TRUST_PROXY: 'true' }, { passwords });
    const member = await createMember(db);
    const api = client(app);
    for (let i = 1; i <= 10; i++) {
      const res = await api.post(SESSION, {
        body: { email: member.email, password: `wrong password ${i}` },
        headers: { 'X-Forwarded-For': `10.0.0.${i}` },
      });
      assert.equal(res.status, 401);
      advance(1000);
    }
    const checked = passwords.verified.length;
    const refused = await api.post(SESSION, {
      body: { email: member.email.toUpperCase(), password: member.password },
      headers: { 'X-Forwarded-For': '10.0.1.1' },
    });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.equal(passwords.verified.length, checked, 'the password was not checked');
    // The first failure leaves the window 15 minutes after it was made: 10 s have passed since.
    assert.equal(refused.headers['retry-after'], String(15 * 60 - 10));
    advance(15 * 60 * 1000 - 10_000);
    const again = await api.post(SESSION, {
      body: { email: member.email, password: member.password },
      headers: { 'X-Forwarded-For': '10.0.1.1' },
    });
    assert.equal(again.status, 200, again.text);
  });

  it('throttles more than 10 failures from one address, whatever the email', async () => {
    const { app, db } = await consoleOnOwnClock();
    const member = await createMember(db);
    const api = client(app);
    for (let i = 1; i <= 10; i++) {
      const res = await api.post(SESSION, { body: { email: `someone-${i}@example.com`, password: 'wrong password!!' } });
      assert.equal(res.status, 401);
    }
    const refused = await api.post(SESSION, { body: { email: member.email, password: member.password } });
    assert.equal(refused.status, 429);
    assert.match(refused.headers['retry-after'], /^[1-9]\d*$/);
  });

  it('ends sessions idle for SESSION_IDLE_MINUTES', async () => {
    const { app, db, advance } = await consoleOnOwnClock({ SESSION_IDLE_MINUTES: '30' });
    const idle = await signIn(app, db);
    advance(29 * 60_000);
    assert.equal((await idle.console.get(ME)).status, 200, 'used within 30 minutes: still open, and touched');
    advance(29 * 60_000);
    assert.equal((await idle.console.get(ME)).status, 200);
    advance(30 * 60_000);
    const expired = await idle.console.get(ME);
    assert.equal(expired.status, 401);
    assert.equal(expired.body.error.code, 'session_expired');
  });

  it('ends every session 7 days after sign-in, however busy', async () => {
    // Idle limit at its largest (7 days): only the absolute end can close a session used halfway.
    const { app, db, advance } = await consoleOnOwnClock({ SESSION_IDLE_MINUTES: '10080' });
    const busy = await signIn(app, db);
    advance(3.5 * 24 * 60 * 60_000);
    assert.equal((await busy.console.get(ME)).status, 200);
    advance(3.5 * 24 * 60 * 60_000 - 1000);
    assert.equal((await busy.console.get(ME)).status, 200, 'still open a second before 7 days');
    advance(1000);
    const ended = await busy.console.get(ME);
    assert.equal(ended.status, 401);
    assert.equal(ended.body.error.code, 'session_expired');
  });

  it('asks which organization when the email has several memberships', async () => {
    const { app, db } = await consoleOnOwnClock();
    const first = await createMember(db, { role: 'member' });
    const second = await createMember(db, { role: 'owner', email: first.email, password: 'another long password' });
    const api = client(app);
    const ambiguous = await api.post(SESSION, { body: { email: first.email, password: first.password } });
    assert.equal(ambiguous.status, 400);
    assert.equal(ambiguous.body.error.code, 'invalid_body');
    assert.match(ambiguous.body.error.message, /organizationId/);

    const res = await api.post(SESSION, { body: { email: first.email, password: 'another long password', organizationId: second.orgId } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.member.id, second.memberId);
    assert.equal(res.body.member.role, 'owner');
    assert.deepEqual(
      res.body.memberships.map((m: { organizationId: string }) => m.organizationId).sort(),
      [first.orgId, second.orgId].sort(),
    );
    const crossed = await api.post(SESSION, { body: { email: first.email, password: first.password, organizationId: second.orgId } });
    assert.equal(crossed.status, 401, "one membership's password does not open another");
    assert.equal(crossed.body.error.code, 'invalid_credentials');
  });

  it('setting a password ends every other session of the member', async () => {
    const { app, db } = await consoleOnOwnClock();
    const session = await signIn(app, db);
    await setPassword(db, session.memberId, 'a brand new password');
    assert.equal((await session.console.get(ME)).status, 401);
    const old = await client(app).post(SESSION, { body: { email: session.email, password: TEST_PASSWORD } });
    assert.equal(old.status, 401);
    const fresh = await client(app).post(SESSION, { body: { email: session.email, password: 'a brand new password' } });
    assert.equal(fresh.status, 200);
    sessionCookieOf(fresh);
  });

  it('answers bad sign-in bodies with invalid_body and unknown query parameters with invalid_query naming them', async () => {
    const { app, db } = await setup();
    const api = client(app);
    const nul = await api.post(SESSION, { body: { email: 'a\u0000@example.com', password: TEST_PASSWORD } });
    assert.equal(nul.status, 400, 'text the database cannot hold is refused, not a 500');
    assert.equal(nul.body.error.code, 'invalid_body');
    const missing = await api.post(SESSION, { body: { email: 'a@example.com' } });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.code, 'invalid_body');
    assert.match(missing.body.error.message, /password/);
    const session = await signIn(app, db);
    const query = await session.console.get(`${ME}?colour=blue`);
    assert.equal(query.status, 400);
    assert.equal(query.body.error.code, 'invalid_query');
    assert.match(query.body.error.message, /colour/);
  });

  it('keeps the ingest endpoints as they were: bearer key, rate limits, CORS; console answers carry no CORS headers', async () => {
    const { app, db, tenant } = await setup();
    const api = client(app);
    const ping = await api.get('/api/v1/ingest/ping', { key: tenant.key, headers: { Origin: 'https://elsewhere.example' } });
    assert.equal(ping.status, 200);
    assert.equal(ping.headers['access-control-allow-origin'], '*');
    assert.ok(ping.headers['x-ratelimit-limit']);
    const session = await signIn(app, db);
    const noCookieOnIngest = await session.console.get('/api/v1/ingest/ping');
    assert.equal(noCookieOnIngest.body.error.code, 'missing_authorization', 'a session does not open the ingest endpoints');
    const keyOnConsole = await api.get(ME, { key: tenant.key });
    assert.equal(keyOnConsole.body.error.code, 'session_required', 'a key does not open the console');
    const me = await session.console.get(ME, { headers: { Origin: 'https://elsewhere.example' } });
    const preflight = await api.get(ME, { headers: { Origin: 'https://elsewhere.example' } });
    for (const res of [me, preflight]) {
      assert.deepEqual(
        Object.keys(res.headers).filter((h) => h.startsWith('access-control-')),
        [],
      );
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
      assert.ok(res.headers['x-request-id']);
    }
  });

  it('a member removed from the organization loses the session', async () => {
    const { app, db } = await setup();
    const session = await signIn(app, db);
    await db.kysely.deleteFrom('members').where('id', '=', session.memberId).execute();
    const res = await session.console.get(ME);
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'session_required');
  });
});

describe('x-roles', () => {
  it('puts the role check the contract declares before the handler: 403 insufficient_role', async () => {
    const base = await setup();
    base.services.contract.paths['/api/v1/console/me'].get['x-roles'] = ['owner', 'admin'];
    const app = createApp(base.config, base.db, { logger: silentLogger, services: base.services });
    const member = await signIn(app, base.db, { role: 'member', orgId: base.tenant.orgId });
    const refused = await member.console.get(ME);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'insufficient_role');
    for (const role of ['owner', 'admin'] as const) {
      const allowed = await signIn(app, base.db, { role, orgId: base.tenant.orgId });
      assert.equal((await allowed.console.get(ME)).status, 200);
    }
  });

  it('refuses a contract whose x-roles names no known role', async () => {
    const base = await setup();
    base.services.contract.paths['/api/v1/console/me'].get['x-roles'] = ['superuser'];
    assert.throws(() => createApp(base.config, base.db, { logger: silentLogger, services: base.services }), /x-roles of getMe/);
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import type { Db } from '../../src/data/db';
import * as administration from '../../src/domain/administration';
import { setPassword } from '../../src/domain/sessions';
import type { MemberRole } from '../../src/data/schema';
import type { PasswordHasher } from '../../src/domain/passwords';
import { client } from './client';
import { createTenant, setup } from './fixtures';

export const TEST_PASSWORD = 'correct horse battery staple';

/** The `ingest_session=<token>` pair of a response's Set-Cookie, as a Cookie header sends it back. */
export function sessionCookieOf(res: { headers: Record<string, unknown> }): string {
  const cookies = [res.headers['set-cookie'] ?? []].flat() as string[];
  const cookie = cookies.find((c) => c.startsWith('ingest_session='));
  assert.ok(cookie, `a session cookie is set: ${JSON.stringify(cookies)}`);
  return cookie.split(';')[0] as string;
}

/** A member of the organization (a new one by default) with a password. */
export async function createMember(
  db: Db,
  options: { role?: MemberRole; orgId?: string; email?: string; password?: string; name?: string } = {},
): Promise<{ memberId: string; orgId: string; email: string; password: string }> {
  const orgId = options.orgId ?? (await createTenant(db)).orgId;
  const email = options.email ?? `member-${randomBytes(4).toString('hex')}@example.com`;
  const password = options.password ?? TEST_PASSWORD;
  const { id } = await administration.addMember(db, { orgId, email, role: options.role ?? 'member', name: options.name });
  await setPassword(db, id, password);
  return { memberId: id, orgId, email, password };
}

/**
 * Signs a new member (role `member` by default; of a new organization unless
 * `orgId`) in through the API; `console` is a client that sends the session
 * cookie and the CSRF token with every request, each answer checked against
 * the contract.
 */
export async function signIn(app: Express, db: Db, options: { role?: MemberRole; orgId?: string } = {}) {
  const member = await createMember(db, options);
  const res = await client(app).post('/api/v1/console/session', {
    body: { email: member.email, password: member.password },
  });
  assert.equal(res.status, 200, res.text);
  const cookie = sessionCookieOf(res);
  const csrfToken: string = res.body.csrfToken;
  return {
    console: client(app, { Cookie: cookie, 'X-CSRF-Token': csrfToken }),
    csrfToken,
    cookie,
    memberId: member.memberId,
    orgId: member.orgId,
    email: member.email,
  };
}

/**
 * An app whose console sessions run on a clock of their own, which the test
 * moves (`advance`) instead of waiting. Each starts at its own random instant
 * of the years 2000 to 2020: every test request comes from 127.0.0.1, so
 * failed sign-ins made on the real clock would count against every other
 * test's sign-ins for 15 minutes. Make sign-ins fail only on such a clock.
 */
export async function consoleOnOwnClock(env: Record<string, string> = {}, options: { passwords?: PasswordHasher } = {}) {
  let now = Date.parse('2000-01-01T00:00:00Z') + Math.floor(Math.random() * 20 * 365) * 86_400_000;
  const base = await setup(env, {}, { now: () => new Date(now), ...options });
  return { ...base, advance: (ms: number) => (now += ms) };
}

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config';
import type { Db } from '../data/db';
import { newId } from '../data/ids';
import type { Executor, MemberRole } from '../data/schema';
import * as store from '../data/sessions';
import { ApiError } from '../errors';
import { findMember } from '../data/admin';
import { AdminError } from './administration';
import { ingestctl, recordChange, type Actor } from './audit';
import { NUL, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PasswordHasher } from './passwords';

/** Who a console request acts as: one membership of one email. */
export interface MemberPrincipal {
  memberId: string;
  orgId: string;
  role: MemberRole;
  email: string;
  sessionId: string;
}

/** What sign-in and `GET /me` answer. */
export interface SessionView {
  member: { id: string; email: string; name: string | null; role: MemberRole };
  organization: { id: string; name: string };
  memberships: Array<{ organizationId: string; organizationName: string; role: MemberRole }>;
  csrfToken: string;
}

export interface SignInInput {
  email: string;
  password: string;
  organizationId?: string;
}

export interface SessionSettings {
  idleMinutes: number;
  /** The clock; tests move it instead of waiting. */
  now?: () => Date;
  passwords?: PasswordHasher;
}

const MINUTE = 60_000;
export const SESSION_MAX_AGE_MS = 7 * 24 * 60 * MINUTE;
/** More than this many failed sign-ins within the window, for one email or one address, and sign-in is refused unchecked. */
export const SIGN_IN_FAILURE_LIMIT = 10;
export const SIGN_IN_WINDOW_MS = 15 * MINUTE;
/** last_used_at is written at most once a minute per session: idle expiry needs no finer grain, and reads stay reads. */
const TOUCH_INTERVAL_MS = MINUTE;

export const INVITE_VALIDITY_MS = 72 * 60 * MINUTE;

/** What the invite page shows: who the invite is for. */
export interface InviteView {
  member: { email: string; name: string | null; role: MemberRole };
  organization: { id: string; name: string };
  expiresAt: string;
}

/** A session cookie's or invite link's secret: 32 random bytes, base64url. Only its SHA-256 is stored. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Password rules shared by ingestctl and the console (12 to 200 characters, no U+0000). */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH || length > PASSWORD_MAX_LENGTH) {
    return `the password must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters, got ${length}`;
  }
  if (password.includes(NUL)) return 'the password must not contain the character U+0000';
  return undefined;
}

/** Console sign-in, sessions and their expiry. */
export class ConsoleSessions {
  private readonly now: () => Date;
  readonly passwords: PasswordHasher;

  constructor(
    private readonly db: Db,
    private readonly settings: SessionSettings,
  ) {
    this.now = settings.now ?? (() => new Date());
    this.passwords = settings.passwords ?? new PasswordHasher();
  }

  /**
   * Opens a session on one membership of the email. Throttling comes first,
   * before any password is checked; an unknown email costs the same hashing
   * as a wrong password and gets the same answer.
   */
  async signIn(input: SignInInput, clientAddress: string): Promise<{ token: string; session: SessionView }> {
    const subjects = [`email:${input.email.toLowerCase()}`, `ip:${clientAddress}`];
    await this.refuseWhenThrottled(subjects);

    const accounts = await store.findAccountsByEmail(this.db.kysely, input.email);
    if (accounts.length > 1 && input.organizationId === undefined) {
      await this.passwords.verifyDummy(input.password);
      throw new ApiError('invalid_body', 'organizationId is required: this email is a member of several organizations.');
    }
    const account = input.organizationId === undefined ? accounts[0] : accounts.find((a) => a.orgId === input.organizationId);
    const matches = account?.passwordHash
      ? await this.passwords.verify(input.password, account.passwordHash)
      : await this.passwords.verifyDummy(input.password);
    if (!account || !matches) {
      await this.recordFailure(subjects);
      throw new ApiError('invalid_credentials');
    }
    const opened = await this.open(this.db.kysely, account.id);
    return { token: opened.token, session: view(account, accounts, opened.csrfToken) };
  }

  /** Who a live invite is for; invite_invalid when it is unknown, used, replaced or expired. */
  async invite(token: string): Promise<InviteView> {
    const invite = await store.findLiveInvite(this.db.kysely, hashToken(token), this.now().toISOString());
    if (!invite) throw new ApiError('invite_invalid');
    const { member, expiresAt } = invite;
    return {
      member: { email: member.email, name: member.name, role: member.role },
      organization: { id: member.orgId, name: member.orgName },
      expiresAt,
    };
  }

  /**
   * Sets the invited member's password and signs them in, using the invite
   * up: all or nothing, in one transaction. Every earlier session of the
   * member ends.
   */
  async acceptInvite(token: string, password: string): Promise<{ token: string; session: SessionView }> {
    const problem = passwordProblem(password);
    if (problem) throw new ApiError('invalid_body', `/password: ${problem}`);
    const hash = await this.passwords.hash(password);
    const opened = await this.db.transaction(async (trx) => {
      const memberId = await store.consumeInvite(trx, hashToken(token), this.now().toISOString());
      const member = memberId === undefined ? undefined : await store.findAccount(trx, memberId);
      if (!member) return undefined;
      const self: Actor = { kind: 'member', orgId: member.orgId, memberId: member.id, email: member.email, role: member.role };
      await replacePassword(trx, member.id, hash, self);
      return { member, ...(await this.open(trx, member.id)) };
    });
    if (!opened) throw new ApiError('invite_invalid');
    return { token: opened.token, session: await this.viewOf(opened.member.id, opened.member.email, opened.csrfToken) };
  }

  /** The session a cookie's token names, touched; session_required when none, session_expired when it has ended. */
  async authenticate(token: string | undefined): Promise<{ principal: MemberPrincipal; csrfToken: string }> {
    if (!token) throw new ApiError('session_required');
    const session = await store.findSessionByTokenHash(this.db.kysely, hashToken(token));
    if (!session) throw new ApiError('session_required');
    const now = this.now().getTime();
    const idleEnd = Date.parse(session.lastUsedAt) + this.settings.idleMinutes * MINUTE;
    if (now >= Date.parse(session.expiresAt) || now >= idleEnd) {
      await store.deleteSession(this.db.kysely, session.id);
      throw new ApiError('session_expired');
    }
    if (now - Date.parse(session.lastUsedAt) >= TOUCH_INTERVAL_MS) {
      await store.touchSession(this.db.kysely, session.id, new Date(now).toISOString());
    }
    const { member } = session;
    return {
      principal: { memberId: member.id, orgId: member.orgId, role: member.role, email: member.email, sessionId: session.id },
      csrfToken: session.csrfToken,
    };
  }

  /** What `GET /me` answers for a signed-in member. */
  async describe(principal: MemberPrincipal, csrfToken: string): Promise<SessionView> {
    return this.viewOf(principal.memberId, principal.email, csrfToken);
  }

  async signOut(sessionId: string): Promise<void> {
    await store.deleteSession(this.db.kysely, sessionId);
  }

  /** Whether the header carries the session's CSRF token (compared in constant time). */
  static csrfMatches(sent: string | undefined, expected: string): boolean {
    if (sent === undefined) return false;
    const a = Buffer.from(sent);
    const b = Buffer.from(expected);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  private async viewOf(memberId: string, email: string, csrfToken: string): Promise<SessionView> {
    const accounts = await store.findAccountsByEmail(this.db.kysely, email);
    const account = accounts.find((a) => a.id === memberId);
    if (!account) throw new ApiError('session_required');
    return view(account, accounts, csrfToken);
  }

  private async open(db: Executor, memberId: string): Promise<{ token: string; csrfToken: string }> {
    const token = newSecretToken();
    const csrfToken = randomBytes(32).toString('base64url');
    const now = this.now();
    await store.insertSession(db, {
      id: newId('ses'),
      tokenHash: hashToken(token),
      memberId,
      csrfToken,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + SESSION_MAX_AGE_MS).toISOString(),
    });
    return { token, csrfToken };
  }

  private async refuseWhenThrottled(subjects: string[]): Promise<void> {
    const now = this.now().getTime();
    const failures = await store.recentFailures(
      this.db.kysely,
      subjects,
      new Date(now - SIGN_IN_WINDOW_MS).toISOString(),
      new Date(now).toISOString(),
    );
    let retryAfterMs = 0;
    for (const times of failures.values()) {
      if (times.length < SIGN_IN_FAILURE_LIMIT) continue;
      // Attempts resume once enough of the oldest failures have left the window.
      const freeing = times[times.length - SIGN_IN_FAILURE_LIMIT] as string;
      retryAfterMs = Math.max(retryAfterMs, Date.parse(freeing) + SIGN_IN_WINDOW_MS - now);
    }
    if (retryAfterMs > 0) {
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
      throw new ApiError('rate_limited', `Too many failed sign-ins for this email or from this address; retry after ${seconds} s.`, {
        'Retry-After': String(seconds),
      });
    }
  }

  private async recordFailure(subjects: string[]): Promise<void> {
    const now = this.now().getTime();
    await store.recordFailure(this.db.kysely, subjects, new Date(now).toISOString(), new Date(now - SIGN_IN_WINDOW_MS).toISOString());
  }
}

function view(account: store.MemberAccount, accounts: store.MemberAccount[], csrfToken: string): SessionView {
  return {
    member: { id: account.id, email: account.email, name: account.name, role: account.role },
    organization: { id: account.orgId, name: account.orgName },
    memberships: accounts.map((a) => ({ organizationId: a.orgId, organizationName: a.orgName, role: a.role })),
    csrfToken,
  };
}

/**
 * Sets a member's password and ends every other session of that member
 * (`keepSessionId`: the session that made the change, if any).
 */
export async function setPassword(
  db: Db,
  memberId: string,
  password: string,
  options: { keepSessionId?: string; passwords?: PasswordHasher } = {},
): Promise<{ id: string }> {
  const problem = passwordProblem(password);
  if (problem) throw new AdminError(problem);
  const hash = await (options.passwords ?? new PasswordHasher()).hash(password);
  const found = await db.transaction((trx) => replacePassword(trx, memberId, hash, ingestctl, options.keepSessionId));
  if (!found) throw new AdminError(`no member ${memberId}`);
  return { id: memberId };
}

/** A new password ends the member's other sessions and voids an open invite; false when there is no such member. */
async function replacePassword(trx: Executor, memberId: string, hash: string, actor: Actor, keepSessionId?: string): Promise<boolean> {
  const member = await findMember(trx, memberId);
  if (!member || !(await store.setPasswordHash(trx, memberId, hash))) return false;
  await store.deleteMemberSessions(trx, memberId, keepSessionId);
  await store.deleteInvite(trx, memberId);
  await recordChange(trx, actor, member.orgId, 'member.password_set', { type: 'member', id: memberId }, { email: member.email });
  return true;
}

/**
 * A one-time link into the console where the member sets a password, valid
 * 72 hours; it voids the member's earlier invite. The token rides in the
 * fragment, which browsers never send, so it reaches no server log.
 */
export async function inviteMember(
  db: Db,
  config: Pick<Config, 'publicUrl'>,
  memberId: string,
  options: { now?: () => Date } = {},
): Promise<{ id: string; url: string; expiresAt: string }> {
  const now = (options.now ?? (() => new Date()))();
  return db.transaction((trx) => createInvite(trx, config, memberId, ingestctl, now));
}

/** The invite, made inside the caller's transaction (the console adds the member in the same one) and audited there. */
export async function createInvite(
  trx: Executor,
  config: Pick<Config, 'publicUrl'>,
  memberId: string,
  actor: Actor,
  now: Date,
): Promise<{ id: string; url: string; expiresAt: string }> {
  const member = await findMember(trx, memberId);
  if (!member) throw new AdminError(`no member ${memberId}`);
  const token = newSecretToken();
  const expiresAt = new Date(now.getTime() + INVITE_VALIDITY_MS).toISOString();
  await store.replaceInvite(trx, { memberId, tokenHash: hashToken(token), createdAt: now.toISOString(), expiresAt });
  await recordChange(trx, actor, member.orgId, 'member.invited', { type: 'member', id: memberId }, { email: member.email, expiresAt });
  return { id: memberId, url: `${config.publicUrl}/console/invite#token=${token}`, expiresAt };
}

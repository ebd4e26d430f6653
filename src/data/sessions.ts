import type { Executor, MemberRole } from './schema';

/** Members as sign-in sees them, console sessions, invites and failed sign-ins. */

export interface MemberAccount {
  id: string;
  orgId: string;
  orgName: string;
  email: string;
  name: string | null;
  role: MemberRole;
  passwordHash: string | null;
}

export interface StoredSession {
  id: string;
  csrfToken: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  member: MemberAccount;
}

function accounts(db: Executor) {
  return db
    .selectFrom('members')
    .innerJoin('organizations', 'organizations.id', 'members.org_id')
    .select([
      'members.id as id',
      'members.org_id as orgId',
      'organizations.name as orgName',
      'members.email as email',
      'members.name as name',
      'members.role as role',
      'members.password_hash as passwordHash',
    ]);
}

/** Every membership of an email (case-insensitive), ordered by organization name then id. */
export async function findAccountsByEmail(db: Executor, email: string): Promise<MemberAccount[]> {
  return accounts(db)
    .where('members.email_lower', '=', email.toLowerCase())
    .orderBy('organizations.name')
    .orderBy('members.org_id')
    .execute();
}

export async function findAccount(db: Executor, memberId: string): Promise<MemberAccount | undefined> {
  return accounts(db).where('members.id', '=', memberId).executeTakeFirst();
}

export async function setPasswordHash(db: Executor, memberId: string, passwordHash: string): Promise<boolean> {
  const result = await db.updateTable('members').set({ password_hash: passwordHash }).where('id', '=', memberId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertSession(
  db: Executor,
  session: { id: string; tokenHash: string; memberId: string; csrfToken: string; createdAt: string; expiresAt: string },
): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      id: session.id,
      token_hash: session.tokenHash,
      member_id: session.memberId,
      csrf_token: session.csrfToken,
      created_at: session.createdAt,
      last_used_at: session.createdAt,
      expires_at: session.expiresAt,
    })
    .execute();
}

export async function findSessionByTokenHash(db: Executor, tokenHash: string): Promise<StoredSession | undefined> {
  const row = await db
    .selectFrom('sessions')
    .select(['id', 'member_id', 'csrf_token', 'created_at', 'last_used_at', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const member = await findAccount(db, row.member_id);
  if (!member) return undefined;
  return {
    id: row.id,
    csrfToken: row.csrf_token,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    member,
  };
}

export async function touchSession(db: Executor, sessionId: string, at: string): Promise<void> {
  await db.updateTable('sessions').set({ last_used_at: at }).where('id', '=', sessionId).execute();
}

export async function deleteSession(db: Executor, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

/** Ends every session of the member but `keep` (the one that made the change, when there is one). */
export async function deleteMemberSessions(db: Executor, memberId: string, keep?: string): Promise<void> {
  let query = db.deleteFrom('sessions').where('member_id', '=', memberId);
  if (keep !== undefined) query = query.where('id', '!=', keep);
  await query.execute();
}

/** Failed sign-ins from `since` to `until` per subject, oldest first (their times, for Retry-After). */
export async function recentFailures(db: Executor, subjects: string[], since: string, until: string): Promise<Map<string, string[]>> {
  const rows = await db
    .selectFrom('sign_in_failures')
    .select(['subject', 'failed_at'])
    .where('subject', 'in', subjects)
    .where('failed_at', '>=', since)
    .where('failed_at', '<=', until)
    .orderBy('failed_at')
    .execute();
  const bySubject = new Map<string, string[]>(subjects.map((s) => [s, []]));
  for (const row of rows) bySubject.get(row.subject)?.push(row.failed_at);
  return bySubject;
}

/** Records a failed sign-in for each subject and forgets every failure that has left the window. */
export async function recordFailure(db: Executor, subjects: string[], at: string, windowStart: string): Promise<void> {
  await db
    .insertInto('sign_in_failures')
    .values(subjects.map((subject) => ({ subject, failed_at: at })))
    .execute();
  await db.deleteFrom('sign_in_failures').where('failed_at', '<', windowStart).execute();
}

/** Makes this the member's one live invite, voiding any earlier one. */
export async function replaceInvite(db: Executor, invite: { memberId: string; tokenHash: string; createdAt: string; expiresAt: string }) {
  const values = { token_hash: invite.tokenHash, created_at: invite.createdAt, expires_at: invite.expiresAt };
  await db
    .insertInto('member_invites')
    .values({ member_id: invite.memberId, ...values })
    .onConflict((oc) => oc.column('member_id').doUpdateSet(values))
    .execute();
}

/** The member a live (unexpired at `now`) invite is for. */
export async function findLiveInvite(db: Executor, tokenHash: string, now: string): Promise<{ member: MemberAccount; expiresAt: string } | undefined> {
  const invite = await db
    .selectFrom('member_invites')
    .select(['member_id', 'expires_at'])
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  const member = invite && (await findAccount(db, invite.member_id));
  return member && invite && { member, expiresAt: invite.expires_at };
}

/** Uses up a live invite: the member it was for, or undefined when it is unknown, used, replaced or expired. */
export async function consumeInvite(db: Executor, tokenHash: string, now: string): Promise<string | undefined> {
  const row = await db
    .deleteFrom('member_invites')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .returning('member_id')
    .executeTakeFirst();
  return row?.member_id;
}

export async function deleteInvite(db: Executor, memberId: string): Promise<void> {
  await db.deleteFrom('member_invites').where('member_id', '=', memberId).execute();
}

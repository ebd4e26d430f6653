import type { Schema } from '../contract/types';
import type { Executor, MemberRole } from './schema';
import { newId, nowIso } from './ids';

/** Organization, member, app, key and directory-worker records, as the admin tool manages them. */

export interface Plan {
  apiEnabled: boolean;
  maxEventsPerMonth: number | null;
}

export async function createOrganization(db: Executor, name: string, plan: Plan): Promise<string> {
  const id = newId('org');
  await db
    .insertInto('organizations')
    .values({
      id,
      name,
      api_enabled: plan.apiEnabled ? 1 : 0,
      max_events_per_month: plan.maxEventsPerMonth,
      created_at: nowIso(),
    })
    .execute();
  return id;
}

export async function findOrganization(db: Executor, orgId: string) {
  return db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirst();
}

export async function updatePlan(db: Executor, orgId: string, changes: Partial<Plan>): Promise<Plan | undefined> {
  const values: { api_enabled?: number; max_events_per_month?: number | null } = {};
  if (changes.apiEnabled !== undefined) values.api_enabled = changes.apiEnabled ? 1 : 0;
  if (changes.maxEventsPerMonth !== undefined) values.max_events_per_month = changes.maxEventsPerMonth;
  if (Object.keys(values).length > 0) {
    await db.updateTable('organizations').set(values).where('id', '=', orgId).execute();
  }
  const org = await findOrganization(db, orgId);
  return org && { apiEnabled: org.api_enabled === 1, maxEventsPerMonth: org.max_events_per_month };
}

export async function addMember(
  db: Executor,
  member: { orgId: string; email: string; role: MemberRole; name?: string },
): Promise<string | undefined> {
  const id = newId('mem');
  const inserted = await db
    .insertInto('members')
    .values({
      id,
      org_id: member.orgId,
      email: member.email,
      email_lower: member.email.toLowerCase(),
      name: member.name ?? null,
      role: member.role,
      created_at: nowIso(),
    })
    .onConflict((oc) => oc.columns(['org_id', 'email_lower']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted?.id;
}

export async function findMemberByEmail(db: Executor, orgId: string, email: string) {
  return db
    .selectFrom('members')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('email_lower', '=', email.toLowerCase())
    .executeTakeFirst();
}

/** Creates the app and its `custom:<slug>` connection together; undefined when the slug is taken. */
export async function createApp(
  db: Executor,
  app: { orgId: string; slug: string; name: string; createdBy: string },
): Promise<string | undefined> {
  const id = newId('app');
  const now = nowIso();
  const inserted = await db
    .insertInto('apps')
    .values({
      id,
      org_id: app.orgId,
      slug: app.slug,
      name: app.name,
      allowed_event_types: '[]',
      created_by: app.createdBy,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(['org_id', 'slug']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return undefined;
  await db
    .insertInto('connections')
    .values({ id: newId('con'), org_id: app.orgId, app_id: id, integration_id: `custom:${app.slug}`, created_at: now })
    .execute();
  return id;
}

export async function findApp(db: Executor, appId: string) {
  return db.selectFrom('apps').selectAll().where('id', '=', appId).executeTakeFirst();
}

export function allowedEventTypesOf(app: { allowed_event_types: string }): string[] {
  return JSON.parse(app.allowed_event_types) as string[];
}

export async function setAllowedEventTypes(db: Executor, appId: string, types: string[]): Promise<void> {
  await db.updateTable('apps').set({ allowed_event_types: JSON.stringify(types) }).where('id', '=', appId).execute();
}

export async function insertApiKey(
  db: Executor,
  key: { orgId: string; appId: string; hash: string; displayPrefix: string; expiresAt: string | null },
): Promise<string> {
  const id = newId('key');
  await db
    .insertInto('api_keys')
    .values({
      id,
      org_id: key.orgId,
      app_id: key.appId,
      key_hash: key.hash,
      display_prefix: key.displayPrefix,
      created_at: nowIso(),
      expires_at: key.expiresAt,
      revoked_at: null,
      last_used_at: null,
    })
    .execute();
  return id;
}

/** Revokes the key, keeping the first revocation time; `changed` says whether this call revoked it. Undefined when no such key. */
export async function revokeApiKey(db: Executor, keyId: string): Promise<{ revokedAt: string; changed: boolean } | undefined> {
  const revoked = await db
    .updateTable('api_keys')
    .set({ revoked_at: nowIso() })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .returning('revoked_at')
    .executeTakeFirst();
  if (revoked?.revoked_at) return { revokedAt: revoked.revoked_at, changed: true };
  const row = await db.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirst();
  return row?.revoked_at ? { revokedAt: row.revoked_at, changed: false } : undefined;
}

/** The organization's no-op update: holds its row until the transaction ends, so changes to its members queue one behind another. */
export async function lockOrganization(db: Executor, orgId: string): Promise<boolean> {
  const locked = await db
    .updateTable('organizations')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', orgId)
    .returning('id')
    .executeTakeFirst();
  return locked !== undefined;
}

export async function renameOrganization(db: Executor, orgId: string, name: string): Promise<void> {
  await db.updateTable('organizations').set({ name }).where('id', '=', orgId).execute();
}

export async function setOrganizationTimeZone(db: Executor, orgId: string, timeZone: string): Promise<void> {
  await db.updateTable('organizations').set({ time_zone: timeZone }).where('id', '=', orgId).execute();
}

export interface AppRecord {
  id: string;
  orgId: string;
  slug: string;
  name: string;
  integrationId: string;
  allowedEventTypes: string[];
  createdAt: string;
}

function appRecords(db: Executor) {
  return db
    .selectFrom('apps as a')
    .innerJoin('connections as c', 'c.app_id', 'a.id')
    .select(['a.id', 'a.org_id', 'a.slug', 'a.name', 'c.integration_id', 'a.allowed_event_types', 'a.created_at']);
}

function toAppRecord(row: {
  id: string;
  org_id: string;
  slug: string;
  name: string;
  integration_id: string;
  allowed_event_types: string;
  created_at: string;
}): AppRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    slug: row.slug,
    name: row.name,
    integrationId: row.integration_id,
    allowedEventTypes: allowedEventTypesOf(row),
    createdAt: row.created_at,
  };
}

export async function listApps(db: Executor, orgId: string): Promise<AppRecord[]> {
  const rows = await appRecords(db).where('a.org_id', '=', orgId).orderBy('a.slug').execute();
  return rows.map(toAppRecord);
}

export async function findAppRecord(db: Executor, appId: string): Promise<AppRecord | undefined> {
  const row = await appRecords(db).where('a.id', '=', appId).executeTakeFirst();
  return row && toAppRecord(row);
}

/** Apps answered for by one member are handed to another (the member is leaving). */
export async function reassignApps(db: Executor, fromMemberId: string, toMemberId: string): Promise<void> {
  await db.updateTable('apps').set({ created_by: toMemberId }).where('created_by', '=', fromMemberId).execute();
}

/** A key as it may be shown after issue: never the key or its hash (the contract's ApiKeySummary). */
export type KeySummary = Schema<'ApiKeySummary'>;

export async function listKeys(db: Executor, appId: string): Promise<KeySummary[]> {
  return db
    .selectFrom('api_keys')
    .select([
      'id',
      'display_prefix as prefix',
      'created_at as createdAt',
      'expires_at as expiresAt',
      'revoked_at as revokedAt',
      'last_used_at as lastUsedAt',
    ])
    .where('app_id', '=', appId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findKey(db: Executor, keyId: string): Promise<{ id: string; orgId: string; appId: string } | undefined> {
  return db.selectFrom('api_keys').select(['id', 'org_id as orgId', 'app_id as appId']).where('id', '=', keyId).executeTakeFirst();
}

export interface MemberRecord {
  id: string;
  orgId: string;
  email: string;
  name: string | null;
  role: MemberRole;
  createdAt: string;
}

function memberRecords(db: Executor) {
  return db.selectFrom('members').select(['id', 'org_id as orgId', 'email', 'name', 'role', 'created_at as createdAt']);
}

export async function listMembers(db: Executor, orgId: string): Promise<MemberRecord[]> {
  return memberRecords(db).where('org_id', '=', orgId).orderBy('email_lower').execute();
}

export async function findMember(db: Executor, memberId: string): Promise<MemberRecord | undefined> {
  return memberRecords(db).where('id', '=', memberId).executeTakeFirst();
}

export async function countOwners(db: Executor, orgId: string): Promise<number> {
  const { owners } = await db
    .selectFrom('members')
    .select((eb) => eb.fn.countAll<number | string>().as('owners'))
    .where('org_id', '=', orgId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(owners);
}

export async function setMemberRole(db: Executor, memberId: string, role: MemberRole): Promise<void> {
  await db.updateTable('members').set({ role }).where('id', '=', memberId).execute();
}

export async function deleteMember(db: Executor, memberId: string): Promise<void> {
  await db.deleteFrom('members').where('id', '=', memberId).execute();
}

/** An owner (else an admin) of the organization, the oldest first: who creates apps on its behalf. */
export async function findAdministrator(db: Executor, orgId: string) {
  const members = await db
    .selectFrom('members')
    .select(['email', 'role'])
    .where('org_id', '=', orgId)
    .where('role', 'in', ['owner', 'admin'])
    .orderBy('created_at')
    .execute();
  return members.find((m) => m.role === 'owner') ?? members[0];
}

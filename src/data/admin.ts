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

/** Revokes the key (keeping the first revocation time); undefined when no such key. */
export async function revokeApiKey(db: Executor, keyId: string): Promise<string | undefined> {
  await db.updateTable('api_keys').set({ revoked_at: nowIso() }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
  const row = await db.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirst();
  return row?.revoked_at ?? undefined;
}

import type { Config } from '../config';
import { contractValidator } from '../contract/validators';
import * as admin from '../data/admin';
import type { Db } from '../data/db';
import type { Executor, MemberRole } from '../data/schema';
import { eventsCounted, monthOf } from '../data/usage';
import { insertWorker } from '../data/workers';
import { ApiError } from '../errors';
import { displayPrefix, generateApiKey, hashApiKey } from './api-keys';
import { normalizeTimestamp } from './judgement';
import { ingestctl, recordChange, type Actor } from './audit';
import { startRecompute } from './rollups';
import { createInvite } from './sessions';

/**
 * The administrative rules, shared by ingestctl (actor `ingestctl`, any
 * organization) and the console API (a member, within their organization).
 * A rule the console can break is told with its contract error code
 * (ApiError); AdminError is for what only the operator's tool can get wrong.
 */
export class AdminError extends Error {}

/** The CLI's input meets the contract's own schemas; the API's met them in the middleware already. */
function meetsContract(schemaName: string, value: unknown): boolean {
  return contractValidator(schemaName)(value) === undefined;
}

function requireEmail(email: string): void {
  if (!meetsContract('MemberEmail', email)) throw new ApiError('invalid_body', `"${email}" is not a valid email address`);
}

function requireRole(role: string): asserts role is MemberRole {
  const issue = contractValidator('MemberRole')(role);
  if (issue) throw new ApiError('invalid_body', `role ${issue.message}`);
}

/** A member acts within their organization only: another organization's ids are answered as unknown. */
function visibleTo(actor: Actor, orgId: string): boolean {
  return actor.kind === 'ingestctl' || actor.orgId === orgId;
}

async function requireOrg(db: Executor, orgId: string) {
  const org = await admin.findOrganization(db, orgId);
  if (!org) throw new AdminError(`no organization ${orgId}`);
  return org;
}

/** The app, when the actor may see it; else app_not_found. */
export async function requireApp(db: Executor, actor: Actor, appId: string): Promise<admin.AppRecord> {
  const app = await admin.findAppRecord(db, appId);
  if (!app || !visibleTo(actor, app.orgId)) throw new ApiError('app_not_found', `No app ${appId} in this organization.`);
  return app;
}

async function requireMember(db: Executor, actor: Actor, memberId: string): Promise<admin.MemberRecord> {
  const member = await admin.findMember(db, memberId);
  if (!member || !visibleTo(actor, member.orgId)) throw new ApiError('member_not_found', `No member ${memberId} in this organization.`);
  return member;
}

/** Only an owner (or the operator) makes, unmakes, adds or removes owners. */
function requireOwnerFor(actor: Actor, ...rolesTouched: MemberRole[]): void {
  if (actor.kind === 'member' && actor.role !== 'owner' && rolesTouched.includes('owner')) {
    throw new ApiError('insufficient_role', 'Only an owner makes, unmakes, adds or removes owners.');
  }
}

// ---- Organizations ----

export async function createOrganization(db: Db, name: string, plan: admin.Plan): Promise<{ id: string }> {
  if (!name.trim()) throw new AdminError('the organization name must not be empty');
  const id = await db.transaction(async (trx) => {
    const orgId = await admin.createOrganization(trx, name.trim(), plan);
    await recordChange(trx, ingestctl, orgId, 'organization.created', { type: 'organization', id: orgId }, { name: name.trim(), ...plan });
    return orgId;
  });
  return { id };
}

export async function setPlan(db: Db, orgId: string, changes: Partial<admin.Plan>) {
  const plan = await db.transaction(async (trx) => {
    await requireOrg(trx, orgId);
    const updated = (await admin.updatePlan(trx, orgId, changes)) as admin.Plan;
    await recordChange(trx, ingestctl, orgId, 'organization.plan_changed', { type: 'organization', id: orgId }, { ...updated });
    return updated;
  });
  return { id: orgId, maxEventsPerMonth: plan.maxEventsPerMonth, api: plan.apiEnabled ? 'enabled' : 'disabled' };
}

export interface OrganizationSummary {
  id: string;
  name: string;
  timeZone: string;
  plan: admin.Plan;
  usage: { month: string; events: number };
}

/** The organization, its plan and the events counted against this month's quota (UTC, as the quota counts). */
export async function organizationSummary(db: Db, orgId: string, now = new Date()): Promise<OrganizationSummary> {
  const org = await requireOrg(db.kysely, orgId);
  const month = monthOf(now);
  return {
    id: org.id,
    name: org.name,
    timeZone: org.time_zone,
    plan: { apiEnabled: org.api_enabled === 1, maxEventsPerMonth: org.max_events_per_month },
    usage: { month, events: await eventsCounted(db.kysely, orgId, month) },
  };
}

/**
 * Renames the organization and/or changes its time zone, both or neither:
 * every value is checked before anything is written.
 */
export async function updateOrganization(
  db: Db,
  orgId: string,
  changes: { name?: string; timeZone?: string },
  actor: Actor = ingestctl,
): Promise<OrganizationSummary> {
  const name = changes.name?.trim();
  if (name === '') throw new ApiError('invalid_body', 'name must not be empty');
  const timeZone = changes.timeZone === undefined ? undefined : canonicalTimeZone(changes.timeZone);
  await db.transaction(async (trx) => {
    const org = await requireOrg(trx, orgId);
    if (name !== undefined && name !== org.name) {
      await admin.renameOrganization(trx, orgId, name);
      await recordChange(trx, actor, orgId, 'organization.renamed', { type: 'organization', id: orgId }, { from: org.name, to: name });
    }
    if (timeZone !== undefined) await setOrganizationTimeZone(trx, org, timeZone, actor);
  });
  return organizationSummary(db, orgId);
}

/** The IANA name of the zone, in its canonical spelling; invalid_body when it names none. */
export function canonicalTimeZone(zone: string): string {
  // Offsets ("+01:00") are accepted by newer engines but are not zone names: days would ignore daylight saving.
  if (/^[A-Za-z]/.test(zone)) {
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
    } catch {
      // not a zone this runtime knows: refused below
    }
  }
  throw new ApiError('invalid_body', `timeZone "${zone}" is not an IANA time zone name (such as "Europe/Berlin" or "UTC")`);
}

/**
 * Every change of an organization's time zone goes through here, inside the
 * transaction that makes it: days of the timeline and of the daily statistics
 * are counted in it. `timeZone` is canonical (canonicalTimeZone).
 */
export async function setOrganizationTimeZone(
  trx: Executor,
  org: { id: string; time_zone: string },
  timeZone: string,
  actor: Actor,
): Promise<void> {
  if (org.time_zone === timeZone) return;
  // Past days are counted again in the new zone.
  await startRecompute(trx, org.id, timeZone);
  await admin.setOrganizationTimeZone(trx, org.id, timeZone);
  await recordChange(
    trx,
    actor,
    org.id,
    'organization.time_zone_changed',
    { type: 'organization', id: org.id },
    { from: org.time_zone, to: timeZone },
  );
}

// ---- Members ----

export async function listMembers(db: Db, orgId: string): Promise<admin.MemberRecord[]> {
  return admin.listMembers(db.kysely, orgId);
}

/**
 * Adds a member to the organization, inside the caller's transaction. An
 * email already there is member_exists; only an owner adds an owner.
 */
export async function addMemberWithin(
  trx: Executor,
  input: { orgId: string; email: string; role: string; name?: string },
  actor: Actor,
): Promise<admin.MemberRecord> {
  if (!visibleTo(actor, input.orgId)) throw new AdminError(`no organization ${input.orgId}`);
  await requireOrg(trx, input.orgId);
  requireEmail(input.email);
  requireRole(input.role);
  requireOwnerFor(actor, input.role);
  const id = await admin.addMember(trx, { ...input, role: input.role });
  if (!id) throw new ApiError('member_exists', `${input.email} is already a member of this organization.`);
  await recordChange(trx, actor, input.orgId, 'member.added', { type: 'member', id }, { email: input.email, role: input.role });
  return (await admin.findMember(trx, id)) as admin.MemberRecord;
}

export async function addMember(db: Db, input: { orgId: string; email: string; role: string; name?: string }, actor: Actor = ingestctl) {
  const member = await db.transaction((trx) => addMemberWithin(trx, input, actor));
  return { id: member.id };
}

/**
 * Adds a member and makes their invite link, together: a member is never
 * added without the link that lets them in.
 */
export async function addAndInviteMember(
  db: Db,
  config: Pick<Config, 'publicUrl'>,
  input: { orgId: string; email: string; role: string; name?: string },
  actor: Actor,
): Promise<{ member: admin.MemberRecord; url: string; expiresAt: string }> {
  return db.transaction(async (trx) => {
    const member = await addMemberWithin(trx, input, actor);
    const { url, expiresAt } = await createInvite(trx, config, member.id, actor, new Date());
    return { member, url, expiresAt };
  });
}

/**
 * Changes a member's role. The organization's row is held for the whole
 * transaction, so two changes to its owners run one after the other and the
 * second sees the first: two admins demoting the last two owners at once
 * cannot both succeed.
 */
export async function changeMemberRole(db: Db, memberId: string, role: string, actor: Actor = ingestctl): Promise<admin.MemberRecord> {
  requireRole(role);
  return db.transaction(async (trx) => {
    const member = await requireMember(trx, actor, memberId);
    await admin.lockOrganization(trx, member.orgId);
    const current = await requireMember(trx, actor, memberId);
    if (current.role === role) return current;
    requireOwnerFor(await asNow(trx, actor), current.role, role);
    await requireAnotherOwner(trx, current);
    await admin.setMemberRole(trx, memberId, role);
    await recordChange(
      trx,
      actor,
      current.orgId,
      'member.role_changed',
      { type: 'member', id: memberId },
      { from: current.role, to: role },
    );
    return { ...current, role };
  });
}

/**
 * Removes a member; their sessions and invite go with the row (the database
 * cascades). The apps they answered for pass to whoever removes them (or to
 * an owner, for ingestctl); the audit log keeps who created what.
 */
export async function removeMember(db: Db, memberId: string, actor: Actor = ingestctl): Promise<void> {
  await db.transaction(async (trx) => {
    const member = await requireMember(trx, actor, memberId);
    await admin.lockOrganization(trx, member.orgId);
    const current = await requireMember(trx, actor, memberId);
    requireOwnerFor(await asNow(trx, actor), current.role);
    await requireAnotherOwner(trx, current);
    await admin.reassignApps(trx, memberId, await heirOf(trx, actor, current));
    await admin.deleteMember(trx, memberId);
    await recordChange(
      trx,
      actor,
      current.orgId,
      'member.removed',
      { type: 'member', id: memberId },
      { email: current.email, role: current.role },
    );
  });
}

/** The actor with the role they hold now: another change may have demoted them since their request began. */
async function asNow(trx: Executor, actor: Actor): Promise<Actor> {
  if (actor.kind !== 'member') return actor;
  const self = await admin.findMember(trx, actor.memberId);
  if (!self) throw new ApiError('session_required', 'You are no longer a member of this organization.');
  return { ...actor, role: self.role };
}

async function requireAnotherOwner(trx: Executor, member: admin.MemberRecord): Promise<void> {
  if (member.role === 'owner' && (await admin.countOwners(trx, member.orgId)) <= 1) {
    throw new ApiError('last_owner', 'This is the last owner of the organization: make another member owner first.');
  }
}

/** Who answers for the apps of a member who leaves: whoever removes them, else an owner, else any other member. */
async function heirOf(trx: Executor, actor: Actor, leaving: admin.MemberRecord): Promise<string> {
  if (actor.kind === 'member' && actor.memberId !== leaving.id) return actor.memberId;
  const others = (await admin.listMembers(trx, leaving.orgId)).filter((m) => m.id !== leaving.id);
  const heir = others.find((m) => m.role === 'owner') ?? others[0];
  if (!heir) throw new AdminError(`${leaving.email} is the organization's only member`);
  return heir.id;
}

// ---- Apps and their whitelist ----

export async function listApps(db: Db, orgId: string): Promise<admin.AppRecord[]> {
  return admin.listApps(db.kysely, orgId);
}

/**
 * Creates an app and its `custom:<slug>` connection. The creator must be an
 * owner or admin of the organization: the session's member in the console,
 * the member named by `creatorEmail` for ingestctl.
 */
export async function createApp(db: Db, input: { orgId: string; slug: string; name: string; asEmail?: string }, actor: Actor = ingestctl) {
  if (!meetsContract('AppSlug', input.slug)) {
    throw new ApiError('invalid_body', 'slug must be 2 to 40 chars of a-z, 0-9 and "-", starting with a letter');
  }
  const name = input.name.trim();
  if (!name) throw new ApiError('invalid_body', 'the app name must not be empty');
  return db.transaction(async (trx) => {
    if (!visibleTo(actor, input.orgId)) throw new AdminError(`no organization ${input.orgId}`);
    await requireOrg(trx, input.orgId);
    const creator = await creatorOf(trx, actor, input.orgId, input.asEmail);
    const id = await admin.createApp(trx, { orgId: input.orgId, slug: input.slug, name, createdBy: creator.id });
    if (!id) throw new ApiError('slug_taken', `The slug "${input.slug}" is already used in this organization.`);
    await recordChange(trx, actor, input.orgId, 'app.created', { type: 'app', id }, { slug: input.slug, name, creator: creator.email });
    return (await admin.findAppRecord(trx, id)) as admin.AppRecord;
  });
}

async function creatorOf(trx: Executor, actor: Actor, orgId: string, email: string | undefined) {
  const member =
    actor.kind === 'member' ? await admin.findMember(trx, actor.memberId) : email && (await admin.findMemberByEmail(trx, orgId, email));
  if (!member) throw new AdminError(`${email ?? 'the creator'} is not a member of ${orgId}`);
  if (member.role !== 'owner' && member.role !== 'admin') {
    throw new ApiError('insufficient_role', `${member.email} is a ${member.role}; creating apps requires an owner or admin`);
  }
  return member;
}

/**
 * Replaces the app's whitelist: each a TypeName, at most 200, a type given
 * twice kept once in the order first given.
 */
export async function setAllowedEventTypes(db: Db, appId: string, types: string[], actor: Actor = ingestctl): Promise<admin.AppRecord> {
  const invalid = types.filter((t) => !meetsContract('TypeName', t));
  if (invalid.length) {
    throw new ApiError(
      'invalid_body',
      `not a valid event type (3 to 64 chars of A-Z, a-z, 0-9, "_", "." and "-"): ${invalid.map((t) => JSON.stringify(t)).join(', ')}`,
    );
  }
  const next = [...new Set(types)];
  const overLimit = contractValidator('AllowedEventTypes')(next);
  if (overLimit) throw new ApiError('invalid_body', `allowedEventTypes ${overLimit.message}; this would be ${next.length}`);
  return db.transaction(async (trx) => {
    const app = await requireApp(trx, actor, appId);
    if (next.join('\n') === app.allowedEventTypes.join('\n')) return app;
    await admin.setAllowedEventTypes(trx, appId, next);
    await recordChange(
      trx,
      actor,
      app.orgId,
      'app.allowed_event_types_changed',
      { type: 'app', id: appId },
      {
        added: next.filter((t) => !app.allowedEventTypes.includes(t)),
        removed: app.allowedEventTypes.filter((t) => !next.includes(t)),
      },
    );
    return { ...app, allowedEventTypes: next };
  });
}

/** ingestctl's allow / disallow: adds or removes types, keeping the whitelist's order. */
export async function changeAllowedEventTypes(db: Db, appId: string, types: string[], allow: boolean) {
  if (types.length === 0) throw new AdminError('name at least one event type');
  const current = (await requireApp(db.kysely, ingestctl, appId)).allowedEventTypes;
  const next = allow ? [...current, ...types] : current.filter((t) => !types.includes(t));
  const app = await setAllowedEventTypes(db, appId, next);
  return { id: appId, allowedEventTypes: app.allowedEventTypes };
}

// ---- Keys ----

export async function listKeys(db: Db, appId: string, actor: Actor): Promise<admin.KeySummary[]> {
  await requireApp(db.kysely, actor, appId);
  return admin.listKeys(db.kysely, appId);
}

/** Issues a key; the only time it is known in clear. `expiresAt`, when given, must be in the future. */
export async function issueKey(db: Db, appId: string, expiresAt?: string, actor: Actor = ingestctl) {
  let expiry: string | null = null;
  if (expiresAt !== undefined) {
    // The ingest endpoints' rule for instants: a date-time with offset whose UTC instant lies in the years 0000 to 9999.
    const formatted = meetsContract('Timestamp', expiresAt);
    const instant = formatted ? normalizeTimestamp(expiresAt, new Date()) : undefined;
    if (!instant)
      throw new ApiError('invalid_body', 'expiresAt must be an ISO 8601 date-time with a timezone offset, in the years 0000 to 9999 (UTC)');
    if (Date.parse(instant) <= Date.now()) throw new ApiError('invalid_body', 'expiresAt must be in the future');
    expiry = instant;
  }
  const key = generateApiKey();
  const prefix = displayPrefix(key);
  const id = await db.transaction(async (trx) => {
    const app = await requireApp(trx, actor, appId);
    const keyId = await admin.insertApiKey(trx, {
      orgId: app.orgId,
      appId,
      hash: hashApiKey(key),
      displayPrefix: prefix,
      expiresAt: expiry,
    });
    await recordChange(trx, actor, app.orgId, 'key.issued', { type: 'key', id: keyId }, { appId, prefix, expiresAt: expiry });
    return keyId;
  });
  return { id, key, prefix, expiresAt: expiry };
}

/**
 * Revokes a key: of the given app when `appId` is given (the console), of any
 * app for ingestctl. Revoking it again answers the first revocation time.
 */
export async function revokeKey(db: Db, keyId: string, actor: Actor = ingestctl, appId?: string) {
  return db.transaction(async (trx) => {
    if (appId !== undefined) await requireApp(trx, actor, appId);
    const key = await admin.findKey(trx, keyId);
    if (!key || !visibleTo(actor, key.orgId) || (appId !== undefined && key.appId !== appId)) {
      throw new ApiError('key_not_found', `No key ${keyId} on this app.`);
    }
    const revoked = (await admin.revokeApiKey(trx, keyId)) as { revokedAt: string; changed: boolean };
    if (revoked.changed) await recordChange(trx, actor, key.orgId, 'key.revoked', { type: 'key', id: keyId }, { appId: key.appId });
    return { id: keyId, revokedAt: revoked.revokedAt };
  });
}

// ---- Workers and the quickstart (ingestctl) ----

export async function addWorker(db: Db, input: { orgId: string; email: string; name?: string }) {
  requireEmail(input.email);
  return db.transaction(async (trx) => {
    await requireOrg(trx, input.orgId);
    const worker = await insertWorker(trx, {
      orgId: input.orgId,
      displayName: input.name ?? input.email,
      email: input.email,
      connectionId: null,
    });
    if (!worker) throw new AdminError(`a worker with email ${input.email} already exists in ${input.orgId}`);
    await recordChange(trx, ingestctl, input.orgId, 'worker.added', { type: 'worker', id: worker.id }, { email: input.email });
    return { id: worker.id };
  });
}

const quickstartEventTypes = ['ticket.resolved', 'build.finished', 'review.submitted'];

/** An organization with an owner, an app allowing a few event types, and a key: ready to call. */
export async function quickstart(db: Db) {
  const org = await createOrganization(db, 'Quickstart Org', { apiEnabled: true, maxEventsPerMonth: null });
  const ownerEmail = 'owner@quickstart.example';
  const owner = await addMember(db, { orgId: org.id, email: ownerEmail, role: 'owner', name: 'Quickstart Owner' });
  const app = await createApp(db, { orgId: org.id, slug: 'quickstart', name: 'Quickstart App', asEmail: ownerEmail });
  const allowed = await setAllowedEventTypes(db, app.id, quickstartEventTypes);
  const key = await issueKey(db, app.id);
  return {
    organizationId: org.id,
    ownerId: owner.id,
    ownerEmail,
    appId: app.id,
    slug: app.slug,
    allowedEventTypes: allowed.allowedEventTypes,
    keyId: key.id,
    key: key.key,
  };
}

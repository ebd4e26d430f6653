import { fullFormats } from 'ajv-formats/dist/formats';
import { sourceDocument } from '../contract/document-source';
import * as admin from '../data/admin';
import type { Db } from '../data/db';
import type { MemberRole } from '../data/schema';
import { insertWorker } from '../data/workers';
import { displayPrefix, generateApiKey, hashApiKey } from './api-keys';

/** A refused administrative action, told to the operator as is. */
export class AdminError extends Error {}

const SLUG = /^[a-z][a-z0-9-]{1,39}$/;
const roles: MemberRole[] = ['owner', 'admin', 'member'];

function typeNamePattern(): RegExp {
  return new RegExp(sourceDocument().components.schemas.TypeName.pattern as string);
}

function requireEmail(email: string): void {
  if (!(fullFormats.email as RegExp).test(email)) throw new AdminError(`"${email}" is not a valid email address`);
}

async function requireOrg(db: Db, orgId: string) {
  const org = await admin.findOrganization(db.kysely, orgId);
  if (!org) throw new AdminError(`no organization ${orgId}`);
  return org;
}

async function requireApp(db: Db, appId: string) {
  const app = await admin.findApp(db.kysely, appId);
  if (!app) throw new AdminError(`no app ${appId}`);
  return app;
}

export async function createOrganization(db: Db, name: string, plan: admin.Plan): Promise<{ id: string }> {
  if (!name.trim()) throw new AdminError('the organization name must not be empty');
  return { id: await admin.createOrganization(db.kysely, name.trim(), plan) };
}

export async function setPlan(db: Db, orgId: string, changes: Partial<admin.Plan>) {
  await requireOrg(db, orgId);
  const plan = (await admin.updatePlan(db.kysely, orgId, changes)) as admin.Plan;
  return { id: orgId, maxEventsPerMonth: plan.maxEventsPerMonth, api: plan.apiEnabled ? 'enabled' : 'disabled' };
}

export async function addMember(db: Db, input: { orgId: string; email: string; role: string; name?: string }) {
  await requireOrg(db, input.orgId);
  requireEmail(input.email);
  if (!roles.includes(input.role as MemberRole)) throw new AdminError(`role must be one of ${roles.join(', ')}`);
  const id = await admin.addMember(db.kysely, { ...input, role: input.role as MemberRole });
  if (!id) throw new AdminError(`${input.email} is already a member of ${input.orgId}`);
  return { id };
}

/** Creating apps requires an owner or admin of the organization. */
export async function createApp(db: Db, input: { orgId: string; slug: string; name: string; asEmail: string }) {
  await requireOrg(db, input.orgId);
  if (!SLUG.test(input.slug)) {
    throw new AdminError('the slug must be 2 to 40 chars of a-z, 0-9 and "-", starting with a letter');
  }
  if (!input.name.trim()) throw new AdminError('the app name must not be empty');
  const member = await admin.findMemberByEmail(db.kysely, input.orgId, input.asEmail);
  if (!member) throw new AdminError(`${input.asEmail} is not a member of ${input.orgId}`);
  if (member.role !== 'owner' && member.role !== 'admin') {
    throw new AdminError(`${input.asEmail} is a ${member.role}; creating apps requires an owner or admin`);
  }
  const id = await db.transaction((trx) =>
    admin.createApp(trx, { orgId: input.orgId, slug: input.slug, name: input.name.trim(), createdBy: member.id }),
  );
  if (!id) throw new AdminError(`the slug "${input.slug}" is already used in ${input.orgId}`);
  return { id, slug: input.slug };
}

/** Adds (allow) or removes (disallow) event types from the app's whitelist, keeping its order. */
export async function changeAllowedEventTypes(db: Db, appId: string, types: string[], allow: boolean) {
  const app = await requireApp(db, appId);
  if (types.length === 0) throw new AdminError('name at least one event type');
  const pattern = typeNamePattern();
  const invalid = types.filter((t) => !pattern.test(t));
  if (invalid.length) throw new AdminError(`not a valid event type (3 to 64 chars, ${pattern.source}): ${invalid.join(', ')}`);
  const current = admin.allowedEventTypesOf(app);
  const next = allow ? [...current, ...types.filter((t, i) => !current.includes(t) && types.indexOf(t) === i)] : current.filter((t) => !types.includes(t));
  await admin.setAllowedEventTypes(db.kysely, appId, next);
  return { id: appId, allowedEventTypes: next };
}

export async function issueKey(db: Db, appId: string, expiresAt?: string) {
  const app = await requireApp(db, appId);
  let expiry: string | null = null;
  if (expiresAt !== undefined) {
    if (!(fullFormats['date-time'] as { validate: (s: string) => boolean }).validate(expiresAt) || Number.isNaN(Date.parse(expiresAt))) {
      throw new AdminError('--expires-at must be an ISO 8601 date-time with a timezone offset');
    }
    expiry = new Date(expiresAt).toISOString();
  }
  const key = generateApiKey();
  const id = await admin.insertApiKey(db.kysely, {
    orgId: app.org_id,
    appId,
    hash: hashApiKey(key),
    displayPrefix: displayPrefix(key),
    expiresAt: expiry,
  });
  return { id, key, expiresAt: expiry };
}

export async function revokeKey(db: Db, keyId: string) {
  const revokedAt = await admin.revokeApiKey(db.kysely, keyId);
  if (!revokedAt) throw new AdminError(`no key ${keyId}`);
  return { id: keyId, revokedAt };
}

export async function addWorker(db: Db, input: { orgId: string; email: string; name?: string }) {
  await requireOrg(db, input.orgId);
  requireEmail(input.email);
  const worker = await insertWorker(db.kysely, { orgId: input.orgId, displayName: input.name ?? input.email, email: input.email, connectionId: null });
  if (!worker) throw new AdminError(`a worker with email ${input.email} already exists in ${input.orgId}`);
  return { id: worker.id };
}

const quickstartEventTypes = ['ticket.resolved', 'build.finished', 'review.submitted'];

/** An organization with an owner, an app allowing a few event types, and a key: ready to call. */
export async function quickstart(db: Db) {
  const org = await createOrganization(db, 'Quickstart Org', { apiEnabled: true, maxEventsPerMonth: null });
  const ownerEmail = 'owner@quickstart.example';
  await addMember(db, { orgId: org.id, email: ownerEmail, role: 'owner', name: 'Quickstart Owner' });
  const app = await createApp(db, { orgId: org.id, slug: 'quickstart', name: 'Quickstart App', asEmail: ownerEmail });
  const allowed = await changeAllowedEventTypes(db, app.id, quickstartEventTypes, true);
  const key = await issueKey(db, app.id);
  return { organizationId: org.id, ownerEmail, appId: app.id, slug: app.slug, allowedEventTypes: allowed.allowedEventTypes, keyId: key.id, key: key.key };
}

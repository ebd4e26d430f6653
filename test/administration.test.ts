import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as data from '../src/data/admin';
import type { Db } from '../src/data/db';
import type { MemberRole } from '../src/data/schema';
import * as administration from '../src/domain/administration';
import { ingestctl, readAuditLog, type Actor } from '../src/domain/audit';
import { Authenticator } from '../src/domain/authenticator';
import { CursorCodec } from '../src/domain/cursor';
import { cursorSecret } from '../src/data/settings';
import { hashApiKey } from '../src/domain/api-keys';
import { reserveEvents, monthOf } from '../src/data/usage';
import { ApiError, type ErrorCode } from '../src/errors';
import { sharedDatabase } from './support/database';
import { eventually } from './support/eventually';
import { createTenant, type Tenant } from './support/fixtures';

async function codeOf(promise: Promise<unknown>): Promise<ErrorCode | string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    if (err instanceof administration.AdminError) return 'admin_error';
    throw err;
  }
}

async function memberActor(db: Db, orgId: string, role: MemberRole, email?: string): Promise<Actor & { kind: 'member' }> {
  const address = email ?? `${role}-${randomBytes(4).toString('hex')}@example.com`;
  const existing = await data.findMemberByEmail(db.kysely, orgId, address);
  const id = existing?.id ?? (await administration.addMember(db, { orgId, email: address, role })).id;
  return { kind: 'member', orgId, memberId: id, email: address, role };
}

describe('Administration rules (domain)', () => {
  let db: Db;
  let tenant: Tenant;
  let other: Tenant;
  let owner: Actor & { kind: 'member' };
  let admin: Actor & { kind: 'member' };

  let cursors: CursorCodec;

  beforeEach(async () => {
    db = (await sharedDatabase()).db;
    cursors = new CursorCodec(() => cursorSecret(db.kysely));
    tenant = await createTenant(db);
    other = await createTenant(db);
    owner = await memberActor(db, tenant.orgId, 'owner', tenant.ownerEmail);
    admin = await memberActor(db, tenant.orgId, 'admin');
  });

  describe('apps', () => {
    it('creates an app with its integration id, the session member as creator, and refuses a taken slug with slug_taken', async () => {
      const app = await administration.createApp(db, { orgId: tenant.orgId, slug: 'tickets', name: ' Tickets ' }, admin);
      assert.deepEqual(
        { slug: app.slug, name: app.name, integrationId: app.integrationId, allowed: app.allowedEventTypes },
        { slug: 'tickets', name: 'Tickets', integrationId: 'custom:tickets', allowed: [] },
      );
      const row = await db.kysely.selectFrom('apps').select('created_by').where('id', '=', app.id).executeTakeFirstOrThrow();
      assert.equal(row.created_by, admin.memberId);
      assert.equal(
        await codeOf(administration.createApp(db, { orgId: tenant.orgId, slug: 'tickets', name: 'Again' }, owner)),
        'slug_taken',
      );
      // Slugs are unique per organization only.
      const elsewhere = await administration.createApp(db, { orgId: other.orgId, slug: 'tickets', name: 'T', asEmail: other.ownerEmail });
      assert.equal(elsewhere.slug, 'tickets');
    });

    it('enforces the slug rule: 2 to 40 chars of [a-z0-9-], starting with a letter', async () => {
      for (const slug of ['ab', `a${'b'.repeat(39)}`, 'a-1']) {
        assert.equal((await administration.createApp(db, { orgId: tenant.orgId, slug, name: 'N' }, owner)).slug, slug);
      }
      for (const slug of ['a', `a${'b'.repeat(40)}`, '1abc', 'Abc', 'a_b', '-ab', 'ab ', '']) {
        assert.equal(await codeOf(administration.createApp(db, { orgId: tenant.orgId, slug, name: 'N' }, owner)), 'invalid_body', slug);
      }
    });

    it("answers another organization's app as app_not_found, whatever the operation", async () => {
      const attempts: Array<Promise<unknown>> = [
        administration.requireApp(db.kysely, owner, other.appId),
        administration.setAllowedEventTypes(db, other.appId, ['x.y.z'], owner),
        administration.listKeys(db, other.appId, owner),
        administration.issueKey(db, other.appId, undefined, owner),
        administration.revokeKey(db, other.keyId, owner, other.appId),
      ];
      // Each is watched from the start: one may fail before the one before it is awaited.
      for (const code of await Promise.all(attempts.map(codeOf))) assert.equal(code, 'app_not_found');
      assert.deepEqual(
        (await administration.listApps(db, tenant.orgId)).map((a) => a.id),
        [tenant.appId],
      );
    });
  });

  describe('whitelist', () => {
    it('replaces the whitelist, keeping the first of repeated types, and refuses a bad type name or more than 200', async () => {
      const app = await administration.setAllowedEventTypes(db, tenant.appId, ['b.type', 'a.type', 'b.type'], admin);
      assert.deepEqual(app.allowedEventTypes, ['b.type', 'a.type']);
      assert.equal(await codeOf(administration.setAllowedEventTypes(db, tenant.appId, ['ok.type', 'no'], admin)), 'invalid_body');
      assert.equal(await codeOf(administration.setAllowedEventTypes(db, tenant.appId, ['a b c'], admin)), 'invalid_body');
      const many = Array.from({ length: 201 }, (_, i) => `type.${i}`);
      assert.equal(await codeOf(administration.setAllowedEventTypes(db, tenant.appId, many, admin)), 'invalid_body');
      assert.equal((await administration.setAllowedEventTypes(db, tenant.appId, many.slice(0, 200), admin)).allowedEventTypes.length, 200);
      // ingestctl's allow goes through the same limit.
      assert.equal(await codeOf(administration.changeAllowedEventTypes(db, tenant.appId, ['one.more'], true)), 'invalid_body');
      assert.deepEqual((await administration.setAllowedEventTypes(db, tenant.appId, [], admin)).allowedEventTypes, []);
    });
  });

  describe('keys', () => {
    it('issues a key that is listed without its secret, refuses a past expiry, and revokes only a key of this app', async () => {
      const issued = await administration.issueKey(db, tenant.appId, '2099-01-01T00:00:00+01:00', admin);
      assert.match(issued.key, /^svc_live_[A-Za-z0-9_-]{43}$/);
      assert.equal(issued.prefix, issued.key.slice(0, 15));
      assert.equal(issued.expiresAt, '2098-12-31T23:00:00.000Z');
      const listed = await administration.listKeys(db, tenant.appId, admin);
      assert.deepEqual(
        listed.map((k) => k.id),
        [issued.id, tenant.keyId],
      );
      const text = JSON.stringify(listed);
      assert.ok(!text.includes(issued.key.slice(15)) && !text.includes(hashApiKey(issued.key)), 'never the key or its hash');
      assert.deepEqual(Object.keys(listed[0] as object).sort(), ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'prefix', 'revokedAt']);

      assert.equal(await codeOf(administration.issueKey(db, tenant.appId, '2020-01-01T00:00:00Z', admin)), 'invalid_body');
      // Its UTC instant is in the year 10000, which no date-time of the contract can carry back.
      assert.equal(await codeOf(administration.issueKey(db, tenant.appId, '9999-12-31T23:59:59-00:01', admin)), 'invalid_body');
      assert.equal(await codeOf(administration.issueKey(db, tenant.appId, 'tomorrow', admin)), 'invalid_body');

      const sibling = await administration.createApp(db, { orgId: tenant.orgId, slug: 'sibling', name: 'S' }, owner);
      assert.equal(await codeOf(administration.revokeKey(db, issued.id, admin, sibling.id)), 'key_not_found');
      assert.equal(await codeOf(administration.revokeKey(db, other.keyId, admin, tenant.appId)), 'key_not_found');
      assert.equal(await codeOf(administration.revokeKey(db, 'key_000000000aaaaaaaaaaaa', admin, tenant.appId)), 'key_not_found');
      const revoked = await administration.revokeKey(db, issued.id, admin, tenant.appId);
      assert.equal(
        (await administration.revokeKey(db, issued.id, admin, tenant.appId)).revokedAt,
        revoked.revokedAt,
        'the first revocation time',
      );
    });
  });

  describe('members and roles', () => {
    it('lets only an owner add, make, unmake or remove owners', async () => {
      const member = await memberActor(db, tenant.orgId, 'member');
      assert.equal(
        await codeOf(administration.addMember(db, { orgId: tenant.orgId, email: 'new-owner@example.com', role: 'owner' }, admin)),
        'insufficient_role',
      );
      assert.equal(await codeOf(administration.changeMemberRole(db, member.memberId, 'owner', admin)), 'insufficient_role');
      assert.equal(await codeOf(administration.changeMemberRole(db, owner.memberId, 'admin', admin)), 'insufficient_role');
      assert.equal(await codeOf(administration.removeMember(db, owner.memberId, admin)), 'insufficient_role');
      // An admin manages admins and members.
      assert.equal((await administration.changeMemberRole(db, member.memberId, 'admin', admin)).role, 'admin');
      assert.equal((await administration.changeMemberRole(db, member.memberId, 'member', admin)).role, 'member');
      // An owner makes owners.
      assert.equal((await administration.changeMemberRole(db, member.memberId, 'owner', owner)).role, 'owner');
      assert.equal((await administration.changeMemberRole(db, owner.memberId, 'admin', owner)).role, 'admin');
    });

    it('refuses an email that is already a member with member_exists, and a bad role or email with invalid_body', async () => {
      const input = { orgId: tenant.orgId, email: tenant.ownerEmail.toUpperCase(), role: 'member' };
      assert.equal(await codeOf(administration.addMember(db, input, admin)), 'member_exists');
      assert.equal(await codeOf(administration.addMember(db, { ...input, email: 'x@example.com', role: 'boss' }, admin)), 'invalid_body');
      assert.equal(await codeOf(administration.addMember(db, { ...input, email: 'nope' }, admin)), 'invalid_body');
      // The same email in another organization is another membership.
      assert.match((await administration.addMember(db, { ...input, orgId: other.orgId }, ingestctl)).id, /^mem_/);
    });

    it('never demotes or removes the last owner', async () => {
      assert.equal(await codeOf(administration.changeMemberRole(db, owner.memberId, 'member', owner)), 'last_owner');
      assert.equal(await codeOf(administration.removeMember(db, owner.memberId, owner)), 'last_owner');
      assert.equal(await codeOf(administration.removeMember(db, owner.memberId)), 'last_owner', 'ingestctl neither');
      const second = await memberActor(db, tenant.orgId, 'owner');
      await administration.removeMember(db, owner.memberId, second);
      assert.equal(await data.findMember(db.kysely, owner.memberId), undefined);
      assert.equal(await codeOf(administration.changeMemberRole(db, second.memberId, 'admin', second)), 'last_owner');
    });

    it('lets only one of two concurrent demotions of the last two owners succeed', async () => {
      for (let round = 0; round < 5; round++) {
        const t = await createTenant(db);
        const a = await memberActor(db, t.orgId, 'owner', t.ownerEmail);
        const b = await memberActor(db, t.orgId, 'owner');
        const outcomes = await Promise.allSettled([
          administration.changeMemberRole(db, a.memberId, 'admin', b),
          administration.changeMemberRole(db, b.memberId, 'admin', a),
        ]);
        const refused = outcomes.filter((o) => o.status === 'rejected');
        assert.equal(refused.length, 1, JSON.stringify(outcomes));
        // The loser finds no other owner left, or itself no longer an owner: the role is read under the lock.
        assert.ok(['last_owner', 'insufficient_role'].includes(((refused[0] as PromiseRejectedResult).reason as ApiError).code));
        assert.equal(await data.countOwners(db.kysely, t.orgId), 1);
      }
    });

    it('lets only one of two concurrent removals of the last two owners succeed', async () => {
      const t = await createTenant(db);
      const a = await memberActor(db, t.orgId, 'owner', t.ownerEmail);
      const b = await memberActor(db, t.orgId, 'owner');
      const outcomes = await Promise.allSettled([
        administration.removeMember(db, a.memberId, b),
        administration.changeMemberRole(db, b.memberId, 'member', a),
      ]);
      assert.equal(outcomes.filter((o) => o.status === 'rejected').length, 1, JSON.stringify(outcomes));
      assert.equal(await data.countOwners(db.kysely, t.orgId), 1);
    });

    it('removes a member, handing their apps to whoever removes them', async () => {
      const leaving = await memberActor(db, tenant.orgId, 'admin');
      const app = await administration.createApp(db, { orgId: tenant.orgId, slug: 'leavers', name: 'L' }, leaving);
      await administration.removeMember(db, leaving.memberId, admin);
      const row = await db.kysely.selectFrom('apps').select('created_by').where('id', '=', app.id).executeTakeFirstOrThrow();
      assert.equal(row.created_by, admin.memberId);
      assert.equal(await codeOf(administration.removeMember(db, leaving.memberId, admin)), 'member_not_found');
    });

    it("answers another organization's member as member_not_found", async () => {
      const stranger = await memberActor(db, other.orgId, 'member');
      assert.equal(await codeOf(administration.changeMemberRole(db, stranger.memberId, 'admin', owner)), 'member_not_found');
      assert.equal(await codeOf(administration.removeMember(db, stranger.memberId, owner)), 'member_not_found');
      assert.ok(!(await administration.listMembers(db, tenant.orgId)).some((m) => m.id === stranger.memberId));
    });
  });

  describe('organization', () => {
    it('accepts IANA zone names in their canonical spelling and refuses anything else with invalid_body', async () => {
      assert.equal(
        (await administration.updateOrganization(db, tenant.orgId, { timeZone: 'Europe/Berlin' }, owner)).timeZone,
        'Europe/Berlin',
      );
      assert.equal((await administration.organizationSummary(db, tenant.orgId)).timeZone, 'Europe/Berlin');
      assert.equal(
        (await administration.updateOrganization(db, tenant.orgId, { timeZone: 'america/new_york' }, owner)).timeZone,
        'America/New_York',
      );
      assert.equal((await administration.updateOrganization(db, tenant.orgId, { timeZone: 'UTC' }, owner)).timeZone, 'UTC');
      for (const zone of ['Mars/Olympus', '+01:00', 'GMT+1', '', 'Europe/', '../etc/passwd', 'x'.repeat(64)]) {
        assert.equal(await codeOf(administration.updateOrganization(db, tenant.orgId, { timeZone: zone }, owner)), 'invalid_body', zone);
      }
      assert.equal((await administration.organizationSummary(db, tenant.orgId)).timeZone, 'UTC');
    });

    it("reports the plan and this month's usage, and renames", async () => {
      const t = await createTenant(db, { maxEventsPerMonth: 1000 });
      const now = new Date();
      await db.transaction((trx) => reserveEvents(trx, db.dialect, t.orgId, monthOf(now), 7, 1000));
      await db.transaction((trx) => reserveEvents(trx, db.dialect, t.orgId, '2001-01', 50, 1000));
      await administration.updateOrganization(db, t.orgId, { name: ' Acme Ltd ' }, ingestctl);
      assert.deepEqual(await administration.organizationSummary(db, t.orgId, now), {
        id: t.orgId,
        name: 'Acme Ltd',
        timeZone: 'UTC',
        plan: { apiEnabled: true, maxEventsPerMonth: 1000 },
        usage: { month: monthOf(now), events: 7 },
      });
      assert.equal(await codeOf(administration.updateOrganization(db, t.orgId, { name: '  ' }, owner)), 'invalid_body');
    });
  });

  describe('audit log', () => {
    it('records every change with its actor, newest first, and never a key, key hash or password', async () => {
      const t = await createTenant(db);
      const boss = await memberActor(db, t.orgId, 'owner', t.ownerEmail);
      const app = await administration.createApp(db, { orgId: t.orgId, slug: 'audited', name: 'Audited' }, boss);
      await administration.setAllowedEventTypes(db, app.id, ['x.happened'], boss);
      const key = await administration.issueKey(db, app.id, undefined, boss);
      await administration.revokeKey(db, key.id, boss, app.id);
      const helper = await administration.addMember(db, { orgId: t.orgId, email: 'helper@example.com', role: 'member' }, boss);
      await administration.changeMemberRole(db, helper.id, 'admin', boss);
      await administration.removeMember(db, helper.id, boss);
      await administration.updateOrganization(db, t.orgId, { name: 'Renamed' }, boss);
      await administration.updateOrganization(db, t.orgId, { timeZone: 'Asia/Tokyo' }, boss);
      await administration.updateOrganization(db, t.orgId, { timeZone: 'Asia/Tokyo' });

      const { items } = await readAuditLog(db.kysely, cursors, t.orgId, 200);
      const story = items.map((e) => `${e.action} ${e.actor.kind}`).reverse();
      assert.deepEqual(story, [
        'organization.created ingestctl',
        'member.added ingestctl',
        'app.created ingestctl',
        'app.allowed_event_types_changed ingestctl',
        'key.issued ingestctl',
        'app.created member',
        'app.allowed_event_types_changed member',
        'key.issued member',
        'key.revoked member',
        'member.added member',
        'member.role_changed member',
        'member.removed member',
        'organization.renamed member',
        'organization.time_zone_changed member',
      ]);
      const newest = items[0];
      assert.deepEqual(newest?.actor, { kind: 'member', memberId: boss.memberId, email: boss.email });
      assert.deepEqual(newest?.target, { type: 'organization', id: t.orgId });
      assert.deepEqual(newest?.details, { from: 'UTC', to: 'Asia/Tokyo' });
      const text = JSON.stringify(items);
      for (const secret of [key.key, key.key.slice(15), hashApiKey(key.key), t.key.slice(15), hashApiKey(t.key)]) {
        assert.ok(!text.includes(secret), 'no key or key hash in the audit log');
      }
      // Another organization's log holds none of it.
      assert.ok(
        (await readAuditLog(db.kysely, cursors, other.orgId, 200)).items.every((e) => e.target.id !== app.id && e.target.id !== t.orgId),
      );
    });

    it('pages newest first without repeating or skipping, and refuses a cursor it did not issue', async () => {
      const t = await createTenant(db);
      for (let i = 0; i < 7; i++) await administration.updateOrganization(db, t.orgId, { name: `Name ${i}` });
      const all = (await readAuditLog(db.kysely, cursors, t.orgId, 200)).items;
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await readAuditLog(db.kysely, cursors, t.orgId, 3, cursor);
        seen.push(...page.items.map((e) => e.id));
        cursor = page.nextCursor ?? undefined;
        if (cursor) await administration.updateOrganization(db, t.orgId, { name: `Meanwhile ${seen.length}` });
      } while (cursor);
      assert.deepEqual(
        seen,
        all.map((e) => e.id),
      );
      // Not issued: made up, a position without a signature or with another's, or a real cursor of another organization.
      const issued = (await readAuditLog(db.kysely, cursors, t.orgId, 1)).nextCursor as string;
      const [, signature] = issued.split('.');
      const position = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', all[1]?.id])).toString('base64url');
      for (const forged of ['x', position, `${position}.${signature}`, `${all[1]?.id}`]) {
        assert.equal(await codeOf(readAuditLog(db.kysely, cursors, t.orgId, 3, forged)), 'invalid_query');
      }
      assert.equal(await codeOf(readAuditLog(db.kysely, cursors, other.orgId, 3, issued)), 'invalid_query');
    });
  });

  describe('key use', () => {
    it('keeps lastUsedAt to within a minute, with at most one write per key per minute', async () => {
      const t = await createTenant(db);
      let now = Date.parse('2030-01-01T00:00:00.000Z');
      const auth = new Authenticator(db, 0, () => now);
      const lastUsed = async () => (await data.listKeys(db.kysely, t.appId))[0]?.lastUsedAt;
      const landed = async (expected: string) => assert.equal(await eventually(lastUsed, (v) => v === expected), expected);
      assert.equal(await lastUsed(), null);
      await auth.authenticate(`Bearer ${t.key}`);
      await landed('2030-01-01T00:00:00.000Z');
      now += 59_000;
      await auth.authenticate(`Bearer ${t.key}`);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(await lastUsed(), '2030-01-01T00:00:00.000Z', 'not written again within the minute');
      now += 2_000;
      await auth.authenticate(`Bearer ${t.key}`);
      await landed('2030-01-01T00:01:01.000Z');
    });

    it('forgets a revoked key at once in the process that revoked it', async () => {
      const t = await createTenant(db);
      const auth = new Authenticator(db, 60);
      await auth.authenticate(`Bearer ${t.key}`);
      await administration.revokeKey(db, t.keyId);
      assert.equal((await auth.authenticate(`Bearer ${t.key}`)).keyId, t.keyId, 'cached');
      auth.forgetKey(t.keyId);
      assert.equal(await codeOf(auth.authenticate(`Bearer ${t.key}`)), 'key_revoked');
    });
  });
});

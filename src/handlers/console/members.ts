import type { Schema } from '../../contract/types';
import type { MemberRecord } from '../../data/admin';
import * as administration from '../../domain/administration';
import type { OperationHandler } from '../../http/operation';
import { sendJson } from '../../http/respond';
import type { Services } from '../../services';
import { actorOf } from './actor';

function memberView({ orgId: _org, ...member }: MemberRecord): Schema<'AdminMember'> {
  return member;
}

export function listMembers(services: Services): OperationHandler<'listMembers'> {
  return async (req, res) => {
    const members = await administration.listMembers(services.db, req.member.orgId);
    sendJson(res, 200, { items: members.map(memberView) } satisfies Schema<'AdminMemberList'>);
  };
}

/** Adds the member and answers their one-time invite link. */
export function inviteMember(services: Services): OperationHandler<'inviteMember'> {
  return async (req, res) => {
    const { member, url, expiresAt } = await administration.addAndInviteMember(
      services.db,
      services.config,
      { orgId: req.member.orgId, ...req.body },
      actorOf(req),
    );
    sendJson(res, 201, { member: memberView(member), url, expiresAt } satisfies Schema<'MemberInvited'>);
  };
}

export function updateMember(services: Services): OperationHandler<'updateMember'> {
  return async (req, res) => {
    const member = await administration.changeMemberRole(services.db, req.params.memberId, req.body.role, actorOf(req));
    sendJson(res, 200, memberView(member));
  };
}

/** Removes the member; their sessions and invite go with them (the database cascades). */
export function removeMember(services: Services): OperationHandler<'removeMember'> {
  return async (req, res) => {
    await administration.removeMember(services.db, req.params.memberId, actorOf(req));
    res.status(204).end();
  };
}

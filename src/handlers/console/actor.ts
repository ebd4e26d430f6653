import type { Request } from 'express';
import type { Actor } from '../../domain/audit';

/** The signed-in member, as the administration rules see who acts. */
export function actorOf(req: Request): Actor & { kind: 'member' } {
  const { memberId, orgId, role, email } = req.member;
  return { kind: 'member', memberId, orgId, role, email };
}

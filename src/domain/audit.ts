import { auditPage, insertAuditRecord, type AuditRecord } from '../data/audit';
import type { Executor, MemberRole } from '../data/schema';
import type { Schema } from '../contract/types';
import type { CursorCodec, CursorScope } from './cursor';

/** Who makes a change: a member in the console, an app's key (its manifest), or an operator with ingestctl. */
export type Actor =
  | { kind: 'member'; orgId: string; memberId: string; email: string; role: MemberRole }
  | { kind: 'api_key'; orgId: string; keyId: string }
  | { kind: 'ingestctl' };

export const ingestctl: Actor = { kind: 'ingestctl' };

export type AuditAction = Schema<'AuditEntry'>['action'];
export type AuditTarget = Schema<'AuditEntry'>['target'];

/**
 * Writes the change to the organization's audit log. Call it with the
 * transaction that makes the change: the entry exists exactly when the change
 * does. `details` must never hold a key, a key hash or a password.
 */
export async function recordChange(
  trx: Executor,
  actor: Actor,
  orgId: string,
  action: AuditAction,
  target: AuditTarget,
  details?: Record<string, unknown>,
): Promise<void> {
  await insertAuditRecord(trx, { orgId, at: nextInstant(), actor: auditActor(actor), action, target, details });
}

let lastInstant = 0;

// Changes made within one millisecond (a quickstart, a burst of requests) still read back
// in the order they were made: this process never gives two entries the same time.
function nextInstant(): string {
  lastInstant = Math.max(Date.now(), lastInstant + 1);
  return new Date(lastInstant).toISOString();
}

function auditActor(actor: Actor): AuditRecord['actor'] {
  switch (actor.kind) {
    case 'member':
      return { kind: 'member', memberId: actor.memberId, email: actor.email };
    case 'api_key':
      return { kind: 'api_key', keyId: actor.keyId };
    case 'ingestctl':
      return { kind: 'ingestctl' };
  }
}

export interface AuditLogPage {
  items: AuditRecord[];
  nextCursor: string | null;
}

/** A page of the organization's audit log, newest first; `cursor` is the previous page's `nextCursor`. */
export async function readAuditLog(
  db: Executor,
  cursors: CursorCodec,
  orgId: string,
  limit: number,
  cursor?: string,
): Promise<AuditLogPage> {
  const scope: CursorScope = { orgId, list: 'audit-log', filters: {} };
  const after = await cursors.after(scope, cursor);
  const rows = await auditPage(db, orgId, limit + 1, after && { at: after[0], id: after[1] });
  return cursors.page(
    scope,
    rows,
    limit,
    (entry) => [entry.at, entry.id],
    (entry) => entry,
  );
}

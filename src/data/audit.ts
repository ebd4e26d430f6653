import { newId } from './ids';
import type { Schema } from '../contract/types';
import type { Executor } from './schema';

/** One change to an organization, as the audit log keeps it. */
export type AuditRecord = Schema<'AuditEntry'>;

export type NewAuditRecord = Omit<AuditRecord, 'id'> & { orgId: string };

export async function insertAuditRecord(db: Executor, record: NewAuditRecord): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      id: newId('aud'),
      org_id: record.orgId,
      at: record.at,
      actor_kind: record.actor.kind,
      actor_member_id: record.actor.memberId ?? null,
      actor_email: record.actor.email ?? null,
      actor_key_id: record.actor.keyId ?? null,
      action: record.action,
      target_type: record.target.type,
      target_id: record.target.id,
      details: record.details === undefined ? null : JSON.stringify(record.details),
    })
    .execute();
}

/** A position in the log, newest first: the entries strictly older than it. */
export interface AuditPosition {
  at: string;
  id: string;
}

/** Up to `limit` entries of the organization, newest first, after `from` when given. */
export async function auditPage(db: Executor, orgId: string, limit: number, from?: AuditPosition): Promise<AuditRecord[]> {
  let query = db.selectFrom('audit_log').selectAll().where('org_id', '=', orgId);
  if (from) {
    query = query.where((eb) => eb.or([eb('at', '<', from.at), eb.and([eb('at', '=', from.at), eb('id', '<', from.id)])]));
  }
  const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: row.id,
    at: row.at,
    actor: {
      kind: row.actor_kind,
      ...(row.actor_member_id === null ? {} : { memberId: row.actor_member_id }),
      ...(row.actor_email === null ? {} : { email: row.actor_email }),
      ...(row.actor_key_id === null ? {} : { keyId: row.actor_key_id }),
    },
    action: row.action,
    target: { type: row.target_type, id: row.target_id },
    ...(row.details === null ? {} : { details: JSON.parse(row.details) as Record<string, unknown> }),
  }));
}

import type { Executor } from './schema';
import { newId, nowIso } from './ids';

export interface WorkerRef {
  id: string;
  displayName: string;
}

/**
 * Inserts a worker: a directory entry (no connection) or one created for an
 * actor through the app's connection. Undefined when the organization already
 * has a worker with this email (emails are unique per organization).
 */
export async function insertWorker(
  db: Executor,
  worker: { orgId: string; displayName: string; email?: string; connectionId: string | null },
): Promise<WorkerRef | undefined> {
  const inserted = await db
    .insertInto('workers')
    .values({
      id: newId('wkr'),
      org_id: worker.orgId,
      display_name: worker.displayName,
      display_name_lower: worker.displayName.toLowerCase(),
      email: worker.email ?? null,
      email_lower: worker.email?.toLowerCase() ?? null,
      connection_id: worker.connectionId,
      created_at: nowIso(),
    })
    .onConflict((oc) => oc.columns(['org_id', 'email_lower']).doNothing())
    .returning(['id', 'display_name'])
    .executeTakeFirst();
  return inserted && { id: inserted.id, displayName: inserted.display_name };
}

/** How many workers the organization has. */
export async function countWorkers(db: Executor, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('workers')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The workers of this organization among `ids`, by id. */
export async function workersById(db: Executor, orgId: string, ids: string[]): Promise<Map<string, WorkerRef>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('workers').select(['id', 'display_name']).where('org_id', '=', orgId).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, { id: r.id, displayName: r.display_name }]));
}

/** Workers linked to this app under `externalIds`, by external id. */
export async function workersByExternalId(db: Executor, appId: string, externalIds: string[]): Promise<Map<string, WorkerRef>> {
  if (externalIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('worker_external_ids as l')
    .innerJoin('workers as w', 'w.id', 'l.worker_id')
    .select(['l.external_id', 'w.id', 'w.display_name'])
    .where('l.app_id', '=', appId)
    .where('l.external_id', 'in', externalIds)
    .execute();
  return new Map(rows.map((r) => [r.external_id, { id: r.id, displayName: r.display_name }]));
}

/** The organization's directory entries among these emails, by lower-cased email. */
export async function workersByEmail(db: Executor, orgId: string, emails: string[]): Promise<Map<string, WorkerRef>> {
  if (emails.length === 0) return new Map();
  const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
  const rows = await db
    .selectFrom('workers')
    .select(['id', 'display_name', 'email_lower'])
    .where('org_id', '=', orgId)
    .where('email_lower', 'in', lower)
    .execute();
  return new Map(rows.map((r) => [r.email_lower as string, { id: r.id, displayName: r.display_name }]));
}

/**
 * Creates a worker linked to the app's connection. When a concurrent transaction
 * created one with the same email first, returns that one instead (created: false).
 */
export async function createWorker(
  db: Executor,
  worker: { orgId: string; connectionId: string; displayName: string; email?: string },
): Promise<{ worker: WorkerRef; created: boolean }> {
  const inserted = await insertWorker(db, worker);
  if (inserted) return { worker: inserted, created: true };
  const existing = await workersByEmail(db, worker.orgId, [worker.email as string]);
  return { worker: existing.get((worker.email as string).toLowerCase()) as WorkerRef, created: false };
}

/**
 * Links `externalId` (per app) to the worker. If another transaction linked it first,
 * that link wins and its worker is returned.
 */
export async function linkExternalId(db: Executor, appId: string, externalId: string, worker: WorkerRef): Promise<WorkerRef> {
  const inserted = await db
    .insertInto('worker_external_ids')
    .values({ app_id: appId, external_id: externalId, external_id_lower: externalId.toLowerCase(), worker_id: worker.id, created_at: nowIso() })
    .onConflict((oc) => oc.columns(['app_id', 'external_id']).doNothing())
    .returning('worker_id')
    .executeTakeFirst();
  if (inserted) return worker;
  return (await workersByExternalId(db, appId, [externalId])).get(externalId) as WorkerRef;
}

export async function deleteWorker(db: Executor, workerId: string): Promise<void> {
  await db.deleteFrom('workers').where('id', '=', workerId).execute();
}

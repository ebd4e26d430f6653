import type { Executor } from './schema';
import { newId, nowIso } from './ids';
import { workerCacheOf } from './worker-cache';

export interface WorkerRef {
  id: string;
  displayName: string;
}

/** A worker to insert: a directory entry (no connection) or one created for an actor through the app's connection. */
export interface NewWorker {
  id: string;
  orgId: string;
  displayName: string;
  email?: string;
  connectionId: string | null;
}

/**
 * Inserts the workers in one statement, in the order given, and returns the ids of those inserted: one whose
 * email the organization's worker has already (emails are unique per organization) is not. On PostgreSQL a
 * row whose email a concurrent transaction is inserting waits for it to end.
 */
export async function insertWorkers(db: Executor, workers: NewWorker[]): Promise<Set<string>> {
  if (workers.length === 0) return new Set();
  const createdAt = nowIso();
  const inserted = await db
    .insertInto('workers')
    .values(
      workers.map((worker) => ({
        id: worker.id,
        org_id: worker.orgId,
        display_name: worker.displayName,
        display_name_lower: worker.displayName.toLowerCase(),
        email: worker.email ?? null,
        email_lower: worker.email?.toLowerCase() ?? null,
        connection_id: worker.connectionId,
        created_at: createdAt,
      })),
    )
    .onConflict((oc) => oc.columns(['org_id', 'email_lower']).doNothing())
    .returning('id')
    .execute();
  return new Set(inserted.map((row) => row.id));
}

/** Inserts a worker (see insertWorkers). Undefined when the organization already has a worker with this email. */
export async function insertWorker(db: Executor, worker: Omit<NewWorker, 'id'>): Promise<WorkerRef | undefined> {
  const id = newId('wkr');
  const inserted = await insertWorkers(db, [{ id, ...worker }]);
  return inserted.has(id) ? { id, displayName: worker.displayName } : undefined;
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
  const load = async (wanted: string[]) => {
    const rows = await db.selectFrom('workers').select(['id', 'display_name']).where('org_id', '=', orgId).where('id', 'in', wanted).execute();
    return new Map(rows.map((r) => [r.id, { id: r.id, displayName: r.display_name }]));
  };
  return workerCacheOf(db)?.lookup(`id ${orgId}`, ids, load) ?? load(ids);
}

/** Workers linked to this app under `externalIds`, by external id. */
export async function workersByExternalId(db: Executor, appId: string, externalIds: string[]): Promise<Map<string, WorkerRef>> {
  if (externalIds.length === 0) return new Map();
  const load = async (wanted: string[]) => {
    const rows = await db
      .selectFrom('worker_external_ids as l')
      .innerJoin('workers as w', 'w.id', 'l.worker_id')
      .select(['l.external_id', 'w.id', 'w.display_name'])
      .where('l.app_id', '=', appId)
      .where('l.external_id', 'in', wanted)
      .execute();
    return new Map(rows.map((r) => [r.external_id, { id: r.id, displayName: r.display_name }]));
  };
  return workerCacheOf(db)?.lookup(`externalId ${appId}`, externalIds, load) ?? load(externalIds);
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
 * Links each externalId (per app) to its worker, in one statement, in the order given, and returns the
 * externalIds linked here: the others were linked already, by a concurrent transaction (which this one
 * waited for on PostgreSQL) or before. A committed link is never changed or removed: instances keep the links
 * they read (ExternalIdLinks).
 */
export async function linkExternalIds(db: Executor, appId: string, links: Array<{ externalId: string; workerId: string }>): Promise<Set<string>> {
  if (links.length === 0) return new Set();
  const createdAt = nowIso();
  const inserted = await db
    .insertInto('worker_external_ids')
    .values(
      links.map(({ externalId, workerId }) => ({
        app_id: appId,
        external_id: externalId,
        external_id_lower: externalId.toLowerCase(),
        worker_id: workerId,
        created_at: createdAt,
      })),
    )
    .onConflict((oc) => oc.columns(['app_id', 'external_id']).doNothing())
    .returning('external_id')
    .execute();
  return new Set(inserted.map((row) => row.external_id));
}

export async function deleteWorkers(db: Executor, workerIds: string[]): Promise<void> {
  if (workerIds.length === 0) return;
  await db.deleteFrom('workers').where('id', 'in', workerIds).execute();
}

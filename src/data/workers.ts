import type { Executor, WorkerRow } from './schema';
import { newId, nowIso } from './ids';

/** Adds a worker to the organization's directory (matched by email); undefined when the email is taken. */
export async function addDirectoryWorker(
  db: Executor,
  worker: { orgId: string; email: string; name?: string },
): Promise<string | undefined> {
  const inserted = await db
    .insertInto('workers')
    .values({
      id: newId('wkr'),
      org_id: worker.orgId,
      display_name: worker.name ?? worker.email,
      email: worker.email,
      email_lower: worker.email.toLowerCase(),
      connection_id: null,
      created_at: nowIso(),
    })
    .onConflict((oc) => oc.columns(['org_id', 'email_lower']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted?.id;
}

export async function findWorker(db: Executor, orgId: string, workerId: string): Promise<WorkerRow | undefined> {
  return db.selectFrom('workers').selectAll().where('org_id', '=', orgId).where('id', '=', workerId).executeTakeFirst();
}

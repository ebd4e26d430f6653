import type { Executor } from './schema';
import type { AppRef } from './timeline';

/** A worker as the console's directory lists it. */
export interface DirectoryWorker {
  id: string;
  displayName: string;
  email?: string;
  createdAt: string;
  /** The timestamp of the worker's newest row. */
  lastActivityAt?: string;
  /** What the list is ordered by (with the id). */
  nameLower: string;
}

/** (lower-cased display name, id) of the last worker of the previous page. */
export type DirectoryKey = [nameLower: string, id: string];

// The highest code point: every string that starts with a prefix sorts below prefix + it, in
// SQLite's byte order and in PostgreSQL's with a C collation (the service's databases use C.UTF-8).
const AFTER_PREFIX = String.fromCodePoint(0x10ffff);

/**
 * The organization's workers ordered by lower-cased display name, then id;
 * with `q` (lower-cased by the caller), those whose display name, email or an
 * externalId starts with it. Every prefix is a range on a lower-cased column,
 * which a b-tree serves on both databases. `lastActivityAt` is one backward
 * step in the (worker_id, ts, id) index per listed worker.
 */
export async function searchWorkers(
  db: Executor,
  orgId: string,
  q: string | undefined,
  after: DirectoryKey | undefined,
  limit: number,
): Promise<DirectoryWorker[]> {
  let query = db
    .selectFrom('workers as w')
    .select(['w.id', 'w.display_name', 'w.display_name_lower', 'w.email', 'w.created_at'])
    .select((eb) => eb.selectFrom('events as e').select(({ fn }) => fn.max('e.ts').as('m')).whereRef('e.worker_id', '=', 'w.id').as('last_activity_at'))
    .where('w.org_id', '=', orgId);
  if (q !== undefined) {
    const end = q + AFTER_PREFIX;
    query = query.where((eb) =>
      eb.or([
        eb.and([eb('w.display_name_lower', '>=', q), eb('w.display_name_lower', '<', end)]),
        eb.and([eb('w.email_lower', '>=', q), eb('w.email_lower', '<', end)]),
        eb(
          'w.id',
          'in',
          eb
            .selectFrom('worker_external_ids as x')
            .select('x.worker_id')
            .where('x.app_id', 'in', eb.selectFrom('apps').select('apps.id').where('apps.org_id', '=', orgId))
            .where('x.external_id_lower', '>=', q)
            .where('x.external_id_lower', '<', end),
        ),
      ]),
    );
  }
  if (after) query = query.where(({ eb, refTuple, tuple }) => eb(refTuple('w.display_name_lower', 'w.id'), '>', tuple(after[0], after[1])));
  const rows = await query.orderBy('w.display_name_lower').orderBy('w.id').limit(limit).execute();
  return rows.map((r) => {
    const worker: DirectoryWorker = {
      id: r.id,
      displayName: r.display_name,
      createdAt: r.created_at,
      nameLower: r.display_name_lower ?? r.display_name.toLowerCase(),
    };
    if (r.email !== null) worker.email = r.email;
    if (r.last_activity_at !== null && r.last_activity_at !== undefined) worker.lastActivityAt = r.last_activity_at;
    return worker;
  });
}

/** A worker of the organization with where it is known from; undefined when `orgId` has no such worker. */
export interface WorkerProfile {
  id: string;
  displayName: string;
  email?: string;
  createdAt: string;
  externalIds: { app: AppRef; externalId: string }[];
  /** Integration ids: the connection the worker came through, and those of apps that know it by an externalId or a snapshot. */
  connections: string[];
}

export async function workerProfile(db: Executor, orgId: string, workerId: string): Promise<WorkerProfile | undefined> {
  const worker = await db
    .selectFrom('workers')
    .select(['id', 'display_name', 'email', 'created_at', 'connection_id'])
    .where('id', '=', workerId)
    .where('org_id', '=', orgId)
    .executeTakeFirst();
  if (!worker) return undefined;
  const [externalIds, connections] = await Promise.all([
    db
      .selectFrom('worker_external_ids as x')
      .innerJoin('apps as a', 'a.id', 'x.app_id')
      .select(['a.id', 'a.slug', 'a.name', 'x.external_id'])
      .where('x.worker_id', '=', workerId)
      .orderBy('a.slug')
      .orderBy('x.external_id')
      .execute(),
    db
      .selectFrom('connections as c')
      .select('c.integration_id')
      .where('c.org_id', '=', orgId)
      .where((eb) =>
        eb.or([
          eb('c.id', '=', worker.connection_id),
          eb('c.app_id', 'in', eb.selectFrom('worker_external_ids').select('app_id').where('worker_id', '=', workerId)),
          eb('c.app_id', 'in', eb.selectFrom('current_snapshots').select('app_id').where('worker_id', '=', workerId)),
        ]),
      )
      .orderBy('c.integration_id')
      .execute(),
  ]);
  const profile: WorkerProfile = {
    id: worker.id,
    displayName: worker.display_name,
    createdAt: worker.created_at,
    externalIds: externalIds.map((x) => ({ app: { id: x.id, slug: x.slug, name: x.name }, externalId: x.external_id })),
    connections: connections.map((c) => c.integration_id),
  };
  if (worker.email !== null) profile.email = worker.email;
  return profile;
}

/** Whether the organization has this worker. */
export async function hasWorker(db: Executor, orgId: string, workerId: string): Promise<boolean> {
  return (await db.selectFrom('workers').select('id').where('id', '=', workerId).where('org_id', '=', orgId).executeTakeFirst()) !== undefined;
}

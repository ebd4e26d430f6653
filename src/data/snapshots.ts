import type { Executor } from './schema';
import { nowIso } from './ids';
import type { AppRef } from './timeline';

export type MetricEntry = [identifier: string, metric: unknown];

/** Makes this snapshot the current one for (worker, app, type) unless a newer one is already current. */
export async function upsertCurrentSnapshot(
  db: Executor,
  snapshot: { orgId: string; appId: string; workerId: string; snapshotType: string; ts: string; metrics: MetricEntry[]; eventId: string },
): Promise<void> {
  await db
    .insertInto('current_snapshots')
    .values({
      worker_id: snapshot.workerId,
      app_id: snapshot.appId,
      snapshot_type: snapshot.snapshotType,
      org_id: snapshot.orgId,
      ts: snapshot.ts,
      metrics: JSON.stringify(snapshot.metrics),
      event_id: snapshot.eventId,
      updated_at: nowIso(),
    })
    .onConflict((oc) =>
      oc
        .columns(['worker_id', 'app_id', 'snapshot_type'])
        .doUpdateSet((eb) => ({
          ts: eb.ref('excluded.ts'),
          metrics: eb.ref('excluded.metrics'),
          event_id: eb.ref('excluded.event_id'),
          updated_at: eb.ref('excluded.updated_at'),
        }))
        .where('current_snapshots.ts', '<=', (eb) => eb.ref('excluded.ts')),
    )
    .execute();
}

export interface StripCard {
  app: AppRef;
  snapshotType: string;
  timestamp: string;
  /** The first four metrics of the most recent snapshot, in the order they were sent. */
  metrics: MetricEntry[];
}

export const STRIP_METRICS_PER_APP = 4;

/**
 * The user strip of one worker: per app, the most recent current snapshot
 * (across its snapshot types) and its first four metrics; cards ordered by app slug.
 */
export async function userStrip(db: Executor, workerId: string): Promise<StripCard[]> {
  const rows = await db
    .selectFrom('current_snapshots as s')
    .innerJoin('apps as a', 'a.id', 's.app_id')
    .select(['s.app_id', 'a.slug', 'a.name', 's.snapshot_type', 's.ts', 's.metrics'])
    .where('s.worker_id', '=', workerId)
    .orderBy('a.slug')
    .orderBy('s.app_id')
    .orderBy('s.ts', 'desc')
    .orderBy('s.updated_at', 'desc')
    .execute();
  const cards: StripCard[] = [];
  for (const row of rows) {
    if (cards.at(-1)?.app.id === row.app_id) continue;
    cards.push({
      app: { id: row.app_id, slug: row.slug, name: row.name },
      snapshotType: row.snapshot_type,
      timestamp: row.ts,
      metrics: (JSON.parse(row.metrics) as MetricEntry[]).slice(0, STRIP_METRICS_PER_APP),
    });
  }
  return cards;
}

import { sql } from 'kysely';
import type { Db } from './db';

/**
 * Deletes up to `limit` timeline rows (events and snapshot history) of one
 * organization older than `cutoff`, oldest first, in one statement walking
 * the events_org_ts index. A snapshot that is still current keeps its history
 * row: current_snapshots.event_id points at it. On PostgreSQL rows another
 * instance's sweep has locked are skipped, so concurrent sweeps neither wait
 * on nor deadlock with each other. Returns how many rows went.
 */
export async function deleteExpiredEvents(db: Db, orgId: string, cutoff: string, limit: number): Promise<number> {
  const result = await db.kysely
    .deleteFrom('events')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('events as e')
        .select('e.id')
        .where('e.org_id', '=', orgId)
        .where('e.ts', '<', cutoff)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('current_snapshots as cs')
                .select(sql.lit(1).as('one'))
                .whereRef('cs.worker_id', '=', 'e.worker_id')
                .whereRef('cs.app_id', '=', 'e.app_id')
                .whereRef('cs.event_id', '=', 'e.id'),
            ),
          ),
        )
        .orderBy('e.ts')
        .limit(limit)
        .$if(db.dialect === 'postgres', (qb) => qb.forUpdate().skipLocked()),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

import type { Schema } from '../contract/types';
import type { Executor } from './schema';
import { nowIso } from './ids';


/** The app's manifest in the order it was stored; empty when none was ever stored. */
export async function manifestOf(db: Executor, appId: string): Promise<Schema<'StoredStatisticDefinition'>[]> {
  const row = await db.selectFrom('statistic_manifests').select('definitions').where('app_id', '=', appId).executeTakeFirst();
  return row ? (JSON.parse(row.definitions) as Schema<'StoredStatisticDefinition'>[]) : [];
}

/** Stores the whole manifest in place of the previous one (one row per app). */
export async function replaceManifest(db: Executor, appId: string, definitions: Schema<'StoredStatisticDefinition'>[]): Promise<void> {
  const values = { definitions: JSON.stringify(definitions), updated_at: nowIso() };
  await db
    .insertInto('statistic_manifests')
    .values({ app_id: appId, ...values })
    .onConflict((oc) => oc.column('app_id').doUpdateSet(values))
    .execute();
}

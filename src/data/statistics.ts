import type { Executor } from './schema';

/** Ids of the definitions in the app's statistic manifest. */
export async function statisticIdsOf(db: Executor, appId: string): Promise<Set<string>> {
  const row = await db.selectFrom('statistic_manifests').select('definitions').where('app_id', '=', appId).executeTakeFirst();
  const definitions = row ? (JSON.parse(row.definitions) as Array<{ id: string }>) : [];
  return new Set(definitions.map((d) => d.id));
}

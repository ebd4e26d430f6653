import type { Executor } from './schema';

export interface KeyRecord {
  keyId: string;
  orgId: string;
  appId: string;
  appSlug: string;
  appName: string;
  integrationId: string;
  connectionId: string;
  apiEnabled: boolean;
  revokedAt: string | null;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** The key with its app and organization, by the key's SHA-256 hash. */
export async function findKeyByHash(db: Executor, keyHash: string): Promise<KeyRecord | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('apps as a', 'a.id', 'k.app_id')
    .innerJoin('connections as c', 'c.app_id', 'a.id')
    .innerJoin('organizations as o', 'o.id', 'k.org_id')
    .select([
      'k.id as keyId',
      'k.org_id as orgId',
      'k.app_id as appId',
      'a.slug as appSlug',
      'a.name as appName',
      'c.integration_id as integrationId',
      'c.id as connectionId',
      'o.api_enabled as apiEnabled',
      'k.revoked_at as revokedAt',
      'k.expires_at as expiresAt',
      'k.last_used_at as lastUsedAt',
    ])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
  return row && { ...row, apiEnabled: row.apiEnabled === 1 };
}

/** Records that the key was used at `at`, unless that was already recorded less than `granularityMs` before. */
export async function touchKey(db: Executor, keyId: string, at: Date, granularityMs: number): Promise<void> {
  const since = new Date(at.getTime() - granularityMs).toISOString();
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at.toISOString() })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', since)]))
    .execute();
}

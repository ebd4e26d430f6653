import type { Executor } from './schema';
import { nowIso } from './ids';

export interface KeyRecord {
  keyId: string;
  orgId: string;
  appId: string;
  appSlug: string;
  appName: string;
  integrationId: string;
  apiEnabled: boolean;
  revokedAt: string | null;
  expiresAt: string | null;
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
      'o.api_enabled as apiEnabled',
      'k.revoked_at as revokedAt',
      'k.expires_at as expiresAt',
    ])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
  return row && { ...row, apiEnabled: row.apiEnabled === 1 };
}

export async function touchKey(db: Executor, keyId: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: nowIso() }).where('id', '=', keyId).execute();
}

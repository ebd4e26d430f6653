import type { Executor } from './schema';

/** The key that signs list cursors: made by migration 003, shared by every instance on this database. */
export async function cursorSecret(db: Executor): Promise<Buffer> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', 'cursor_secret').executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64url');
}

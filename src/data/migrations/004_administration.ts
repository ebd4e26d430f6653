import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) => c.notNull())
    .addColumn('actor_member_id', 'text')
    .addColumn('actor_email', 'text')
    .addColumn('actor_key_id', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('details', 'text')
    .execute();
  // The log is read newest first per organization, a page at a time (keyset on at, id).
  await db.schema.createIndex('audit_log_org_at').on('audit_log').columns(['org_id', 'at', 'id']).execute();
  // The keys of one app, for the console's key list.
  await db.schema.createIndex('api_keys_app').on('api_keys').columns(['app_id', 'created_at']).execute();

}

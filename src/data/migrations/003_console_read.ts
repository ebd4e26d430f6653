import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

/**
 * The console's read side. Every index here is paid for by ingest, so the
 * events indexes of 001 are replaced, not added to: the same two b-trees,
 * each with `id` appended so that keyset pages ordered by (ts, id) are read
 * straight off the index, with no sort of a timestamp's ties.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Shared by every instance on this database: a cursor one instance issued, another accepts.
  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db
    .withTables<{ settings: { name: string; value: string } }>()
    .insertInto('settings')
    .values({ name: 'cursor_secret', value: randomBytes(32).toString('base64url') })
    .execute();

  // The day of the timeline and of the rollups is a day in this zone (IANA name).
  await db.schema
    .alterTable('organizations')
    .addColumn('time_zone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .execute();

  // Case-insensitive prefix search as a range on a lower-cased copy (JavaScript's
  // toLowerCase, the same on both databases; SQL lower() is ASCII-only on SQLite).
  await db.schema.alterTable('workers').addColumn('display_name_lower', 'text').execute();
  await db.schema.alterTable('worker_external_ids').addColumn('external_id_lower', 'text').execute();
  await backfillLowerCase(db);

  // The timeline of the organization, newest first, and its day ranges (replaces events_org_ts).
  await db.schema.dropIndex('events_org_ts').execute();
  await db.schema.createIndex('events_org_ts_id').on('events').columns(['org_id', 'ts', 'id']).execute();
  // One worker's timeline, its snapshot history, its last activity (replaces events_worker_ts).
  await db.schema.dropIndex('events_worker_ts').execute();
  await db.schema.createIndex('events_worker_ts_id').on('events').columns(['worker_id', 'ts', 'id']).execute();
  // Workers of an organization by name: the search by name prefix and the list's order.
  await db.schema.createIndex('workers_org_name').on('workers').columns(['org_id', 'display_name_lower', 'id']).execute();
  // The search by externalId prefix, within the organization's apps.
  await db.schema.createIndex('worker_external_ids_app_lower').on('worker_external_ids').columns(['app_id', 'external_id_lower']).execute();
  // A worker's externalIds on its detail page (the primary key starts with app_id).
  await db.schema.createIndex('worker_external_ids_worker').on('worker_external_ids').column('worker_id').execute();
}

async function backfillLowerCase(db: Kysely<unknown>): Promise<void> {
  const k = db.withTables<{
    workers: { id: string; display_name: string; display_name_lower: string | null };
    worker_external_ids: { app_id: string; external_id: string; external_id_lower: string | null };
  }>();
  for (const w of await k.selectFrom('workers').select(['id', 'display_name']).execute()) {
    await k.updateTable('workers').set({ display_name_lower: w.display_name.toLowerCase() }).where('id', '=', w.id).execute();
  }
  for (const l of await k.selectFrom('worker_external_ids').select(['app_id', 'external_id']).execute()) {
    await k
      .updateTable('worker_external_ids')
      .set({ external_id_lower: l.external_id.toLowerCase() })
      .where('app_id', '=', l.app_id)
      .where('external_id', '=', l.external_id)
      .execute();
  }
}

import { sql, type Kysely } from 'kysely';

// One schema for SQLite and PostgreSQL: only types both understand (text, integer).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('api_enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('max_events_per_month', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('members')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('email_lower', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('role', 'text', (c) => c.notNull().check(sqlIn('role', ['owner', 'admin', 'member'])))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('members_org_email', ['org_id', 'email_lower'])
    .execute();

  await db.schema
    .createTable('apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('allowed_event_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_by', 'text', (c) => c.notNull().references('members.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('apps_org_slug', ['org_id', 'slug'])
    .execute();

  await db.schema
    .createTable('connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('app_id', 'text', (c) => c.notNull().unique().references('apps.id'))
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('connections_org_integration', ['org_id', 'integration_id'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();

  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('email_lower', 'text')
    .addColumn('connection_id', 'text', (c) => c.references('connections.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    // NULLs are distinct on both dialects: only workers with an email are unique by it.
    .addUniqueConstraint('workers_org_email', ['org_id', 'email_lower'])
    .execute();

  await db.schema
    .createTable('worker_external_ids')
    .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
    .addColumn('external_id', 'text', (c) => c.notNull())
    .addColumn('worker_id', 'text', (c) => c.notNull().references('workers.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('worker_external_ids_pk', ['app_id', 'external_id'])
    .execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('integration_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('category', 'text')
    .addColumn('ts', 'text', (c) => c.notNull())
    .addColumn('duration', 'integer')
    .addColumn('pillar', 'text')
    .addColumn('statistic_id', 'text')
    .addColumn('metadata', 'text')
    .addColumn('metrics', 'text')
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .execute();
  // One worker's timeline, newest first; the organization's timeline for a day.
  await db.schema.createIndex('events_worker_ts').on('events').columns(['worker_id', 'ts']).execute();
  await db.schema.createIndex('events_org_ts').on('events').columns(['org_id', 'ts']).execute();

  await db.schema
    .createTable('current_snapshots')
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('snapshot_type', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('ts', 'text', (c) => c.notNull())
    .addColumn('metrics', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('current_snapshots_pk', ['worker_id', 'app_id', 'snapshot_type'])
    .execute();

  await db.schema
    .createTable('statistic_manifests')
    .addColumn('app_id', 'text', (c) => c.primaryKey().references('apps.id'))
    .addColumn('definitions', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('idempotency_records')
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('body', 'text')
    .addColumn('response_request_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_records_pk', ['api_key_id', 'idempotency_key'])
    .execute();
  // Purging expired records walks this index instead of the table.
  await db.schema.createIndex('idempotency_records_expires').on('idempotency_records').column('expires_at').execute();

  await db.schema
    .createTable('monthly_usage')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('monthly_usage_pk', ['org_id', 'month'])
    .execute();
}

function sqlIn(column: string, values: string[]) {
  // Values are constants of this file, never input.
  return sql.raw(`${column} in (${values.map((v) => `'${v}'`).join(', ')})`);
}

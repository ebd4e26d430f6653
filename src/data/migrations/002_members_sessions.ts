import type { Kysely } from 'kysely';

// Console sign-in: a password per membership, sessions and invites stored only as token hashes, and failed sign-ins for throttling.
export async function up(db: Kysely<unknown>): Promise<void> {
  // `scrypt$N$r$p$salt$hash`; null until the member has set a password.
  await db.schema.alterTable('members').addColumn('password_hash', 'text').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // SHA-256 (hex) of the cookie's 32-byte random token; the token itself is never stored.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('member_id', 'text', (c) => c.notNull().references('members.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text', (c) => c.notNull())
    // Absolute end, 7 days after sign-in; the idle end is derived from last_used_at.
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_member').on('sessions').column('member_id').execute();

  // One live invite per member: a new one replaces the row, which voids the old link.
  await db.schema
    .createTable('member_invites')
    .addColumn('member_id', 'text', (c) => c.primaryKey().references('members.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  // One row per failed sign-in and throttled subject ('email:<lower-case email>' or 'ip:<address>'),
  // kept for the 15-minute window only: every failure purges what has left it.
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('failed_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_failures_subject').on('sign_in_failures').columns(['subject', 'failed_at']).execute();
  await db.schema.createIndex('sign_in_failures_failed_at').on('sign_in_failures').column('failed_at').execute();
}

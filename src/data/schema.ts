import type { Generated, Insertable, Kysely, Selectable, Transaction } from 'kysely';

/**
 * Tables as both dialects store them: timestamps are UTC ISO-8601 text (so they
 * sort as text on SQLite), booleans are 0/1 integers, JSON is text.
 */
export interface OrganizationsTable {
  id: string;
  name: string;
  api_enabled: number;
  max_events_per_month: number | null;
  created_at: string;
}

export type MemberRole = 'owner' | 'admin' | 'member';

export interface MembersTable {
  id: string;
  org_id: string;
  email: string;
  email_lower: string;
  name: string | null;
  role: MemberRole;
  created_at: string;
}

export interface AppsTable {
  id: string;
  org_id: string;
  slug: string;
  name: string;
  /** JSON array of event type names. */
  allowed_event_types: string;
  created_by: string;
  created_at: string;
}

export interface ConnectionsTable {
  id: string;
  org_id: string;
  app_id: string;
  /** `custom:<slug>` */
  integration_id: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  app_id: string;
  key_hash: string;
  display_prefix: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface WorkersTable {
  id: string;
  org_id: string;
  display_name: string;
  email: string | null;
  email_lower: string | null;
  /** The connection the worker was created through; null for directory workers. */
  connection_id: string | null;
  created_at: string;
}

export interface WorkerExternalIdsTable {
  app_id: string;
  external_id: string;
  worker_id: string;
  created_at: string;
}

export type EventKind = 'event' | 'snapshot';

export interface EventsTable {
  id: string;
  org_id: string;
  app_id: string;
  worker_id: string;
  integration_id: string;
  kind: EventKind;
  /** eventType, or snapshotType for snapshot history rows. */
  event_type: string;
  category: string | null;
  ts: string;
  duration: number | null;
  pillar: string | null;
  statistic_id: string | null;
  metadata: string | null;
  metrics: string | null;
  request_id: string;
  received_at: string;
}

export interface CurrentSnapshotsTable {
  worker_id: string;
  app_id: string;
  snapshot_type: string;
  org_id: string;
  ts: string;
  /** JSON array of [identifier, metric] pairs, in the order sent. */
  metrics: string;
  event_id: string;
  updated_at: string;
}

export interface StatisticManifestsTable {
  app_id: string;
  /** JSON array of stored definitions, in the order sent. */
  definitions: string;
  updated_at: string;
}

export interface IdempotencyRecordsTable {
  api_key_id: string;
  idempotency_key: string;
  fingerprint: string;
  state: 'in_progress' | 'done';
  status: number | null;
  body: string | null;
  response_request_id: string | null;
  created_at: string;
  expires_at: string;
}

export interface MonthlyUsageTable {
  org_id: string;
  /** `YYYY-MM`, UTC */
  month: string;
  event_count: Generated<number>;
}

export interface Database {
  organizations: OrganizationsTable;
  members: MembersTable;
  apps: AppsTable;
  connections: ConnectionsTable;
  api_keys: ApiKeysTable;
  workers: WorkersTable;
  worker_external_ids: WorkerExternalIdsTable;
  events: EventsTable;
  current_snapshots: CurrentSnapshotsTable;
  statistic_manifests: StatisticManifestsTable;
  idempotency_records: IdempotencyRecordsTable;
  monthly_usage: MonthlyUsageTable;
}

/** The database or a transaction on it: data-layer functions accept either. */
export type Executor = Kysely<Database> | Transaction<Database>;

export type EventRow = Selectable<EventsTable>;
export type NewEventRow = Insertable<EventsTable>;

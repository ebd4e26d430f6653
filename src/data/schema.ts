import type { Generated, Kysely, Transaction } from 'kysely';
import type { Schema } from '../contract/types';

/**
 * Tables as both dialects store them: timestamps are UTC ISO-8601 text (so they
 * sort as text on SQLite), booleans are 0/1 integers, JSON is text.
 */
export interface OrganizationsTable {
  id: string;
  name: string;
  api_enabled: number;
  max_events_per_month: number | null;
  /** IANA time zone name; days of the timeline and rollups are counted in it. */
  time_zone: Generated<string>;
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
  /** `scrypt$N$r$p$salt$hash` (base64url salt and hash); null until a password is set. */
  password_hash: string | null;
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
  /** display_name.toLowerCase(), for the case-insensitive prefix search. */
  display_name_lower: string | null;
  email: string | null;
  email_lower: string | null;
  /** The connection the worker was created through; null for directory workers. */
  connection_id: string | null;
  created_at: string;
}

export interface WorkerExternalIdsTable {
  app_id: string;
  external_id: string;
  /** external_id.toLowerCase(), for the case-insensitive prefix search. */
  external_id_lower: string | null;
  worker_id: string;
  created_at: string;
}

export type EventKind = 'event' | 'snapshot';

/** A column: its SQL type and, in the type system only, the TypeScript type of its values. */
interface Column<T> {
  sqlType: 'text' | 'integer';
  /** Never set at run time: it carries `T` into the row type. */
  readonly values?: T;
}
const text = <T extends string | null = string>(): Column<T> => ({ sqlType: 'text' });
const integer = <T extends number | null = number>(): Column<T> => ({ sqlType: 'integer' });
type RowOf<Columns> = { [Name in keyof Columns]: Columns[Name] extends Column<infer T> ? T : never };

/**
 * The timeline's columns, in the order migration 001 creates them: the one
 * list that both the row type (EventsTable) and the batch insert are made from.
 */
export const eventColumns = {
  id: text(),
  org_id: text(),
  app_id: text(),
  worker_id: text(),
  integration_id: text(),
  kind: text<EventKind>(),
  /** eventType, or snapshotType for snapshot history rows. */
  event_type: text(),
  category: text<string | null>(),
  ts: text(),
  duration: integer<number | null>(),
  pillar: text<string | null>(),
  statistic_id: text<string | null>(),
  /** JSON object, as sent. */
  metadata: text<string | null>(),
  /** Snapshot history rows: JSON array of [identifier, metric] pairs, in the order sent. */
  metrics: text<string | null>(),
  request_id: text(),
  received_at: text(),
  /** The id of the batch's first event, for the rollups (migration 005); null for snapshots. */
  batch_id: text<string | null>(),
};

export type EventsTable = RowOf<typeof eventColumns>;

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

/** More of a month's count, spread over slots 1 to SPREAD_SLOTS (src/data/usage.ts). */
export interface MonthlyUsageSlotsTable {
  org_id: string;
  /** `YYYY-MM`, UTC */
  month: string;
  slot: number;
  event_count: Generated<number>;
}

export interface SessionsTable {
  id: string;
  /** SHA-256 (hex) of the cookie's token. */
  token_hash: string;
  member_id: string;
  csrf_token: string;
  created_at: string;
  last_used_at: string;
  /** Absolute end: 7 days after sign-in. */
  expires_at: string;
}

export interface MemberInvitesTable {
  member_id: string;
  /** SHA-256 (hex) of the link's token. */
  token_hash: string;
  created_at: string;
  expires_at: string;
}

export interface SignInFailuresTable {
  /** `email:<lower-case email>` or `ip:<client address>`. */
  subject: string;
  failed_at: string;
}

export type AuditActorKind = 'member' | 'api_key' | 'ingestctl';

export interface AuditLogTable {
  id: string;
  org_id: string;
  at: string;
  actor_kind: AuditActorKind;
  actor_member_id: string | null;
  actor_email: string | null;
  actor_key_id: string | null;
  action: Schema<'AuditEntry'>['action'];
  target_type: Schema<'AuditEntry'>['target']['type'];
  target_id: string;
  /** JSON object, never a secret. */
  details: string | null;
}

export interface RollupOutboxTable {
  /** The batch's id (its first event's). */
  id: string;
  org_id: string;
  app_id: string;
  /** The batch's first and last event time; null only for a batch waiting before they were kept whose events are all gone. */
  first_ts: string | null;
  last_ts: string | null;
  created_at: string;
  /** Null while waiting; the generation being recomputed when applied during a recompute. */
  applied_generation: number | null;
}

export interface RollupStateTable {
  org_id: string;
  /** The generation that answers reads. */
  generation: number;
  /** The zone its days are in. */
  time_zone: string;
  /** While a recompute runs: when the answering generation stopped taking batches. */
  frozen_at: string | null;
  /** JSON array of the statistic ids the answering generation has, while a recompute runs. */
  frozen_statistics: string | null;
  target_generation: number | null;
  target_time_zone: string | null;
  /** The recompute's position in the organization's events, by (ts, id). */
  scan_ts: string | null;
  scan_id: string | null;
  lease_owner: string | null;
  lease_until: string | null;
}

/** Parts of one statistic's value, from which every value of any range is derived. */
export interface RollupParts {
  count: number;
  sum: number;
  numerator: number;
  denominator: number;
}

export interface RollupDaysTable extends RollupParts {
  org_id: string;
  generation: number;
  statistic_id: string;
  day: string;
  worker_id: string;
  /** The event's pillar, else its definition's. */
  pillar: string;
}

export type RollupOrgDaysTable = Omit<RollupDaysTable, 'worker_id'>;

/** A closed day's rows of one statistic joined into one text (migration 008). */
export interface RollupDayListsTable {
  org_id: string;
  generation: number;
  statistic_id: string;
  day: string;
  /** The parts listed after each worker id, comma-separated in order (`count,sum`). */
  parts: string;
  /** The organization's count of the day when the list was made: the list holds while it is the day's. */
  stamp: number | string;
  /** Per row of the day, in key order: its worker id, then the parts, separated by spaces. */
  workers: string;
  /** New each time the day is listed: a tag's list never changes (migration 010). */
  tag: string;
}

/** Service-wide values shared by every instance (the cursor-signing secret). */
export interface SettingsTable {
  name: string;
  value: string;
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
  monthly_usage_slots: MonthlyUsageSlotsTable;
  sessions: SessionsTable;
  member_invites: MemberInvitesTable;
  sign_in_failures: SignInFailuresTable;
  audit_log: AuditLogTable;
  settings: SettingsTable;
  rollup_outbox: RollupOutboxTable;
  rollup_state: RollupStateTable;
  rollup_days: RollupDaysTable;
  rollup_org_days: RollupOrgDaysTable;
  rollup_day_lists: RollupDayListsTable;
}

/** The database or a transaction on it: data-layer functions accept either. */
export type Executor = Kysely<Database> | Transaction<Database>;

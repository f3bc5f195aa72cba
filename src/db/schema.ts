import type { ColumnType, Generated } from 'kysely';

/** Timestamps come back from pg as Date; we insert with defaults or Date. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;

export interface UsersTable {
  id: string;
  email: string;
  username: string | null;
  default_account_id: string | null;
  created_at: Timestamp;
}

export interface AccountsTable {
  id: string;
  name: string;
  owner_user_id: string;
  plan_key: Generated<string>;
  entitlement_source: Generated<EntitlementSource>;
  billing_access_state: Generated<BillingAccessState>;
  grace_ends_at: NullableTimestamp;
  plan_changed_at: NullableTimestamp;
  created_at: Timestamp;
}

/** Where an account's plan comes from: nothing paid (`default`), the operator (`manual`), a subscription (`stripe`). */
export type EntitlementSource = 'default' | 'manual' | 'stripe';
export type BillingAccessState = 'active' | 'past_due_grace' | 'restricted';

export type Role = 'owner' | 'admin' | 'developer' | 'viewer';

export interface MembershipsTable {
  account_id: string;
  user_id: string;
  role: Role;
  created_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string;
  key_prefix: string;
  key_hash: Buffer;
  created_at: Timestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export type ActivationStatus =
  | 'live'
  | 'inactive'
  | 'pending_secrets'
  | 'requires_migration'
  | 'failed';
export type Severity = 'debug' | 'info' | 'warn' | 'error';
type Json = ColumnType<unknown, string, string>;

export interface AppsTable {
  id: string;
  account_id: string;
  name: string;
  summary: string | null;
  visibility: 'public' | 'private';
  tags: ColumnType<string[], string, string>;
  live_release_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface BlobsTable {
  account_id: string;
  sha256: Buffer;
  size: number;
  /** null when the bytes are in the object store */
  data: Buffer | null;
  stored_in: Generated<'postgres' | 's3'>;
  created_at: Timestamp;
  last_used_at: Generated<Date>;
}

export interface ReleasesTable {
  id: string;
  app_id: string;
  seq: number;
  manifest: Json;
  message: string | null;
  provenance: ColumnType<unknown, string | null, string | null>;
  created_by_api_key_id: string | null;
  created_by_key_prefix: string | null;
  activation_status: ActivationStatus;
  activation_reasons: ColumnType<string[], string, string>;
  missing_secrets: ColumnType<string[], string, string>;
  activated_at: NullableTimestamp;
  previous_release_id: string | null;
  preview: Generated<boolean>;
  created_at: Timestamp;
}

export interface ReleaseFilesTable {
  release_id: string;
  path: string;
  content_type: string;
  sha256: Buffer;
  size: number;
}

export interface AppResourcesTable {
  app_id: string;
  resource_type: string;
  resource_name: string;
  spec: Json;
  provisioned_release_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AppSecretsTable {
  app_id: string;
  name: string;
  sealed: Buffer;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AppEventsTable {
  id: Generated<number>;
  app_id: string;
  account_id: string;
  type: string;
  severity: Severity;
  message: string;
  metadata: Json;
  release_id: string | null;
  app_user_id: string | null;
  api_key_id: string | null;
  request_id: string | null;
  created_at: Timestamp;
}

export interface AccountInvitationsTable {
  id: string;
  account_id: string;
  email: string;
  role: Role;
  invited_by_user_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  accepted_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface EmailAuthTokensTable {
  token_hash: Buffer;
  email: string;
  invitation_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface PendingSignupsTable {
  token_hash: Buffer;
  email: string;
  invitation_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface ConsoleSessionsTable {
  id: string;
  token_hash: Buffer;
  user_id: string;
  csrf_token: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export type DeviceStatus = 'pending' | 'approved' | 'denied' | 'consumed';

export interface DeviceAuthorizationsTable {
  id: string;
  device_code_hash: Buffer;
  user_code: string;
  client_name: string;
  client_address: string | null;
  status: Generated<DeviceStatus>;
  interval_seconds: Generated<number>;
  last_polled_at: NullableTimestamp;
  created_at: Timestamp;
  expires_at: Timestamp;
  approved_by_user_id: string | null;
  account_id: string | null;
  api_key_id: string | null;
  decided_at: NullableTimestamp;
}

export interface AbuseCountersTable {
  key: string;
  window_start: Timestamp;
  hits: number;
  expires_at: Timestamp;
}

export interface SecretsKeyCheckTable {
  id: number;
  sealed: Buffer;
  created_at: Timestamp;
}

export interface UsageCountersTable {
  app_id: string;
  /** a UTC day; written as 'YYYY-MM-DD' */
  day: ColumnType<Date, string, string>;
  metric: string;
  /** bigint: read as text */
  value: ColumnType<string, number, number>;
}

export interface AccountFlagsTable {
  account_id: string;
  flag: 'suspended';
  reason: string;
  created_at: Timestamp;
}

export interface AppFlagsTable {
  app_id: string;
  flag: 'suspended' | 'takedown';
  reason: string;
  created_at: Timestamp;
}

export interface AccountUsageTable {
  account_id: string;
  /** the first day of a UTC month; written as 'YYYY-MM-DD' */
  period_start: ColumnType<Date, string, string>;
  metric: string;
  /** bigint: read as text */
  value: ColumnType<string, number, number>;
}

export interface AppRoutesTable {
  id: string;
  app_id: string;
  account_id: string;
  route_type: 'slug' | 'custom_domain';
  hostname: string;
  status: string;
  disabled_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** the label of a slug route (its hostname is `<slug>.<apps host>`); null for custom domains */
  slug: string | null;
  verification_token: string | null;
  verified_at: NullableTimestamp;
  last_check: ColumnType<unknown, string | null | undefined, string | null>;
  last_checked_at: NullableTimestamp;
  next_check_at: NullableTimestamp;
  check_attempts: Generated<number>;
  provider: ColumnType<unknown, string | null | undefined, string | null>;
  deleted_at: NullableTimestamp;
}

export interface AccountBillingTable {
  account_id: string;
  stripe_customer_id: string;
  subscription: ColumnType<unknown, string | null, string | null>;
  unknown_price_id: string | null;
  synced_at: NullableTimestamp;
}

export interface StripeEventsTable {
  id: string;
  type: string;
  account_id: string | null;
  received_at: Generated<Date>;
}

export interface BillingHistoryTable {
  id: Generated<string>;
  account_id: string;
  source: string;
  stripe_event_id: string | null;
  from_plan_key: string;
  to_plan_key: string;
  from_state: string;
  to_state: string;
  created_at: Generated<Date>;
}

export interface BlobVariantsTable {
  account_id: string;
  sha256: Buffer;
  encoding: 'br' | 'gzip';
  variant_sha256: Buffer | null;
  size: number | null;
}

export interface Database {
  users: UsersTable;
  accounts: AccountsTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  apps: AppsTable;
  blobs: BlobsTable;
  releases: ReleasesTable;
  release_files: ReleaseFilesTable;
  worker_heartbeats: WorkerHeartbeatsTable;
  node_heartbeats: NodeHeartbeatsTable;
  operators: OperatorsTable;
  operator_actions: OperatorActionsTable;
  app_job_backlog: AppJobBacklogTable;
  app_resources: AppResourcesTable;
  app_secrets: AppSecretsTable;
  app_events: AppEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  app_schedule_runs: AppScheduleRunsTable;
  app_rows: AppRowsTable;
  app_row_uniques: AppRowUniquesTable;
  app_row_index_entries: AppRowIndexEntriesTable;
  app_users: AppUsersTable;
  app_sessions: AppSessionsTable;
  app_invites: AppInvitesTable;
  app_files: AppFilesTable;
  dev_outbox: DevOutboxTable;
  app_email_verifications: AppEmailVerificationsTable;
  account_invitations: AccountInvitationsTable;
  email_auth_tokens: EmailAuthTokensTable;
  pending_signups: PendingSignupsTable;
  console_sessions: ConsoleSessionsTable;
  device_authorizations: DeviceAuthorizationsTable;
  abuse_counters: AbuseCountersTable;
  secrets_key_check: SecretsKeyCheckTable;
  usage_counters: UsageCountersTable;
  account_flags: AccountFlagsTable;
  app_flags: AppFlagsTable;
  account_usage: AccountUsageTable;
  app_routes: AppRoutesTable;
  account_billing: AccountBillingTable;
  stripe_events: StripeEventsTable;
  billing_history: BillingHistoryTable;
  blob_variants: BlobVariantsTable;
  analytics_traffic: AnalyticsTrafficTable;
  analytics_paths: AnalyticsPathsTable;
  analytics_referrers: AnalyticsReferrersTable;
}

export interface WebhookDeliveriesTable {
  app_id: string;
  webhook_name: string;
  delivery_id: string;
  received_at: Timestamp;
}

export interface AppScheduleRunsTable {
  app_id: string;
  job_name: string;
  period_start: Timestamp;
  job_id: string;
  created_at: Timestamp;
}

export interface AppRowsTable {
  app_id: string;
  collection: string;
  id: string;
  data: ColumnType<Record<string, unknown>, string, string>;
  owner_user_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface AppRowUniquesTable {
  app_id: string;
  collection: string;
  index_name: string;
  key: string;
  row_id: string;
}

export interface AppRowIndexEntriesTable {
  app_id: string;
  collection: string;
  index_name: string;
  key: string;
  created_at: Timestamp;
  row_id: string;
}

export interface AppUsersTable {
  id: string;
  app_id: string;
  email: string;
  password_hash: string;
  roles: ColumnType<string[], string, string>;
  verified: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
  disabled_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface AppSessionsTable {
  token_hash: Buffer;
  app_id: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface AppInvitesTable {
  id: string;
  app_id: string;
  email: string;
  roles: ColumnType<string[], string, string>;
  token_hash: Buffer;
  expires_at: Timestamp;
  accepted_at: NullableTimestamp;
  created_by_user_id: string | null;
  created_at: Timestamp;
}

export interface AppFilesTable {
  id: string;
  app_id: string;
  store: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: Buffer;
  owner_user_id: string | null;
  created_at: Timestamp;
  deleted_at: NullableTimestamp;
}

export interface DevOutboxTable {
  id: Generated<number>;
  to_address: string;
  subject: string;
  body: string;
  created_at: Timestamp;
}

export interface AppEmailVerificationsTable {
  token_hash: Buffer;
  app_id: string;
  user_id: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface WorkerHeartbeatsTable {
  worker_id: string;
  process_id: string;
  host: string;
  pid: number;
  started_at: Generated<Date>;
  beat_at: Generated<Date>;
}

/** How many jobs each app's code enqueued that have not finished (src/jobs/backlog.ts). */
export interface AppJobBacklogTable {
  app_id: string;
  waiting: Generated<number>;
}

export interface NodeHeartbeatsTable {
  node_id: string;
  host: string;
  pid: number;
  role: string;
  blob_bucket: string | null;
  started_at: Generated<Date>;
  beat_at: Generated<Date>;
}

export interface OperatorsTable {
  user_id: string;
  granted_by: string;
  granted_at: Generated<Date>;
}

export interface OperatorActionsTable {
  id: string;
  seq: Generated<number>;
  at: Generated<Date>;
  actor_user_id: string | null;
  actor_label: string;
  action: string;
  account_id: string | null;
  app_id: string | null;
  detail: ColumnType<unknown, string | undefined, string>;
}

export interface AnalyticsTrafficTable {
  app_id: string;
  day: ColumnType<Date, string, string>;
  route_kind: 'canonical' | 'slug' | 'custom_domain';
  target: 'static' | 'server' | 'not_found';
  status_bucket: '2xx' | '3xx' | '4xx' | '5xx';
  bot: boolean;
  requests: number;
}
export interface AnalyticsPathsTable {
  app_id: string;
  day: ColumnType<Date, string, string>;
  path: string;
  requests: number;
}
export interface AnalyticsReferrersTable {
  app_id: string;
  day: ColumnType<Date, string, string>;
  domain: string;
  requests: number;
}

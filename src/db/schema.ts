/**
 * The Kysely types of the database: `Database` names every table; each table's columns are in
 * `tables/<area>.ts`. Written by hand and checked against the migrated database
 * (test/foundation/schema-types.test.ts).
 */
import type { BackupRunsTable } from './tables/operations.ts';
import type {
  UsersTable,
  AccountsTable,
  MembershipsTable,
  ApiKeysTable,
  AccountInvitationsTable,
  EmailAuthTokensTable,
  PendingSignupsTable,
  ConsoleSessionsTable,
  DeviceAuthorizationsTable,
  AbuseCountersTable,
  AccountFlagsTable,
  OperatorsTable,
  OperatorActionsTable,
} from './tables/identity.ts';
import type {
  AppsTable,
  BlobsTable,
  ReleaseBytecodeTable,
  ReleasesTable,
  ReleaseFilesTable,
  AppResourcesTable,
  AppSecretsTable,
  AppEventsTable,
  SecretsKeyCheckTable,
  BlobVariantsTable,
  AppRoutesTable,
  AppFlagsTable,
} from './tables/publishing.ts';
import type {
  WebhookDeliveriesTable,
  AppScheduleRunsTable,
  AppRowsTable,
  AppRowUniquesTable,
  AppRowIndexEntriesTable,
  AppUsersTable,
  AppSessionsTable,
  AppInvitesTable,
  AppFilesTable,
  DevOutboxTable,
  AppEmailVerificationsTable,
  AppJobBacklogTable,
} from './tables/app-resources.ts';
import type {
  KvEntriesTable,
  QueueMessagesTable,
  R2ObjectsTable,
  R2UploadPartsTable,
  R2UploadsTable,
  SqlChunksTable,
  SqlDatabasesTable,
} from './tables/bindings.ts';
import type {
  UsageCountersTable,
  AccountUsageTable,
  AccountBillingTable,
  StripeEventsTable,
  BillingHistoryTable,
  AnalyticsTrafficTable,
  AnalyticsPathsTable,
  AnalyticsReferrersTable,
  WorkerHeartbeatsTable,
  NodeHeartbeatsTable,
} from './tables/usage-and-billing.ts';

export type * from './tables/columns.ts';
export type * from './tables/identity.ts';
export type * from './tables/publishing.ts';
export type * from './tables/app-resources.ts';
export type * from './tables/usage-and-billing.ts';
export type * from './tables/operations.ts';

export interface Database {
  users: UsersTable;
  accounts: AccountsTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  apps: AppsTable;
  blobs: BlobsTable;
  releases: ReleasesTable;
  release_files: ReleaseFilesTable;
  release_bytecode: ReleaseBytecodeTable;
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
  kv_entries: KvEntriesTable;
  queue_messages: QueueMessagesTable;
  r2_objects: R2ObjectsTable;
  sql_databases: SqlDatabasesTable;
  sql_chunks: SqlChunksTable;
  r2_uploads: R2UploadsTable;
  r2_upload_parts: R2UploadPartsTable;
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
  backup_runs: BackupRunsTable;
}

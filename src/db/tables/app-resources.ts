/**
 * What an app declares, at run time: data rows and their indexes, app users and their sessions,
 * invitations and verifications, files, webhook deliveries, schedules and the job backlog, the
 * development outbox.
 */
import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, NullableTimestamp } from './columns.ts';

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
  /** what a queued message names (src/mail/links.ts); null on rows older than that */
  id: string | null;
  app_id: string;
  user_id: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

/** How many jobs each app's code enqueued that have not finished (src/jobs/backlog.ts). */
export interface AppJobBacklogTable {
  app_id: string;
  waiting: Generated<number>;
}

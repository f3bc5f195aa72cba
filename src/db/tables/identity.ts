/**
 * People, accounts and their ways in: users, accounts and members, API keys, invitations, sign-in
 * links and sessions, the device flow, rate limits, flags, operators.
 */
import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, NullableTimestamp } from './columns.ts';

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
  /** what a queued message names (src/mail/links.ts); null on rows older than that */
  id: string | null;
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

export interface AccountFlagsTable {
  account_id: string;
  flag: 'suspended';
  reason: string;
  created_at: Timestamp;
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

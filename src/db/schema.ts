import type { ColumnType, Generated } from 'kysely';

/** Timestamps come back from pg as Date; we insert with defaults or Date. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

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
  created_at: Timestamp;
}

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

export interface Database {
  users: UsersTable;
  accounts: AccountsTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
}

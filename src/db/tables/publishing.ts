/**
 * Apps and what publishing keeps: releases and their files, content-addressed blobs and their
 * variants, declared resources, secrets, the event log, slugs and domains, app flags.
 */
import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, NullableTimestamp, Json } from './columns.ts';

export type ActivationStatus =
  | 'live'
  | 'inactive'
  | 'pending_secrets'
  | 'requires_migration'
  | 'failed';

export type Severity = 'debug' | 'info' | 'warn' | 'error';

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
  /** preview links issued before it open no preview of the app (null: none revoked) */
  previews_revoked_at: NullableTimestamp;
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

/** A release's modules as one engine build's bytecode (src/releases/bytecode.ts). */
export interface ReleaseBytecodeTable {
  release_id: string;
  engine: string;
  /** brotli-compressed pack (src/sandbox/module-bytecode.ts) */
  pack: Buffer;
  /** the pack's size uncompressed */
  bytes: number;
  created_at: Generated<Date>;
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

export interface SecretsKeyCheckTable {
  id: number;
  sealed: Buffer;
  created_at: Timestamp;
}

export interface AppFlagsTable {
  app_id: string;
  flag: 'suspended' | 'takedown';
  reason: string;
  created_at: Timestamp;
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

export interface BlobVariantsTable {
  account_id: string;
  sha256: Buffer;
  encoding: 'br' | 'gzip';
  variant_sha256: Buffer | null;
  size: number | null;
}

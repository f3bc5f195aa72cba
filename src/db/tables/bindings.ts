/** Other hosts' storage bindings, kept by the platform: Workers KV entries, Queues messages, R2 objects. */
import type { ColumnType } from 'kysely';
import type { Timestamp, NullableTimestamp } from './columns.ts';

export interface KvEntriesTable {
  app_id: string;
  namespace: string;
  /** the key's UTF-8 bytes (KV keys may hold NUL; lists run in byte order) */
  key: Buffer;
  /** the value's bytes when small, else null and `sha256` names the account's blob */
  value: Buffer | null;
  sha256: Buffer | null;
  size: number;
  /** the JSON text of what put() was given (reads return it parsed) */
  metadata: ColumnType<unknown, string | null, string | null>;
  expires_at: NullableTimestamp;
  updated_at: Timestamp;
  /** the sequence number of the write that made it (Deno KV's versionstamp) */
  version: ColumnType<string, string | undefined, string>;
}

export interface QueueMessagesTable {
  id: string;
  app_id: string;
  queue: string;
  content_type: 'text' | 'json' | 'bytes' | 'v8';
  body: string;
  size: number;
  attempts: ColumnType<number, number | undefined, number>;
  state: ColumnType<'ready' | 'inflight', 'ready' | 'inflight' | undefined, 'ready' | 'inflight'>;
  visible_at: Timestamp;
  lease_until: NullableTimestamp;
  created_at: Timestamp;
  /** the queue it was dead-lettered from, while it waits in a dead letter queue */
  dead_from: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface R2ObjectsTable {
  app_id: string;
  bucket: string;
  key: Buffer;
  version: string;
  /** the object's one blob, or null when it is `pieces` */
  sha256: Buffer | null;
  pieces: Buffer[] | null;
  piece_sizes: ColumnType<string[] | null, number[] | null | undefined, number[] | null>;
  size: ColumnType<string, number, number>;
  etag: string;
  checksums: ColumnType<Record<string, string>, string | undefined, string>;
  http_metadata: ColumnType<Record<string, string>, string | undefined, string>;
  custom_metadata: ColumnType<Record<string, string>, string | undefined, string>;
  uploaded: Timestamp;
}

export interface R2UploadsTable {
  id: string;
  app_id: string;
  bucket: string;
  key: Buffer;
  http_metadata: ColumnType<Record<string, string>, string | undefined, string>;
  custom_metadata: ColumnType<Record<string, string>, string | undefined, string>;
  created_at: Timestamp;
}

export interface R2UploadPartsTable {
  upload_id: string;
  part_number: number;
  sha256: Buffer;
  size: ColumnType<string, number, number>;
  etag: string;
}

/** A SQLite database (a D1 database): its size, its commits, and the lease of the node holding it (src/sql/). */
export interface SqlDatabasesTable {
  id: string;
  app_id: string | null;
  kind: string;
  name: string;
  size_bytes: ColumnType<number, number | undefined, number>;
  version: ColumnType<number, number | undefined, number>;
  lease_node: string | null;
  lease_epoch: ColumnType<number, number | undefined, number>;
  lease_expires_at: NullableTimestamp;
  created_at: Timestamp;
}

/** A SQLite database's file as 4 KiB chunks, the latest image of each. */
export interface SqlChunksTable {
  database_id: string;
  chunk_no: number;
  data: Buffer;
}

/** Other hosts' storage bindings, kept by the platform: Workers KV entries. */
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
}

/** Column types every table uses. */
import type { ColumnType } from 'kysely';

/** Timestamps come back from pg as Date; we insert with defaults or Date. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;

export type Json = ColumnType<unknown, string, string>;

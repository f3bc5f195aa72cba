/**
 * What is counted and paid for: usage counters, monthly usage, billing records and Stripe events,
 * analytics aggregates; which nodes and workers run.
 */
import type { ColumnType, Generated } from 'kysely';
import type { NullableTimestamp } from './columns.ts';

export interface UsageCountersTable {
  app_id: string;
  /** a UTC day; written as 'YYYY-MM-DD' */
  day: ColumnType<Date, string, string>;
  metric: string;
  /** bigint: read as text */
  value: ColumnType<string, number, number>;
}

export interface AccountUsageTable {
  account_id: string;
  /** the first day of a UTC month; written as 'YYYY-MM-DD' */
  period_start: ColumnType<Date, string, string>;
  metric: string;
  /** bigint: read as text */
  value: ColumnType<string, number, number>;
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

export interface WorkerHeartbeatsTable {
  worker_id: string;
  process_id: string;
  host: string;
  pid: number;
  started_at: Generated<Date>;
  beat_at: Generated<Date>;
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

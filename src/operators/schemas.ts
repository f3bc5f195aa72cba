/** The Operator section's records: accounts at a glance, an account's apps, health, actions. */
import * as v from 'valibot';
import { pageQuery, timeIdCursor } from '../http/paging.ts';
import { component, DateTime } from '../openapi/components.ts';
import { PLAN_KEYS } from '../plans/catalogue.ts';
import { PlanChangeAction, PlanViolation } from '../plans/schemas.ts';

const Flag = v.strictObject({ flag: v.string(), reason: v.string(), created_at: DateTime });

export const OperatorAccount = component(
  'OperatorAccount',
  v.strictObject({
    id: v.string(),
    name: v.string(),
    owner_email: v.string(),
    plan_key: v.string(),
    entitlement_source: v.string(),
    billing_access_state: v.string(),
    created_at: DateTime,
    apps: v.number(),
    members: v.number(),
    requests_this_month: v.number(),
    stored_bytes: v.number(),
    flags: v.array(Flag),
  }),
);

export const OperatorAccountList = component(
  'OperatorAccountList',
  v.strictObject({ accounts: v.array(OperatorAccount), cursor: v.nullable(v.string()) }),
);

export const OperatorAppList = component(
  'OperatorAppList',
  v.strictObject({
    apps: v.array(
      v.strictObject({
        id: v.string(),
        name: v.string(),
        created_at: DateTime,
        deleted_at: v.nullable(DateTime),
        live_release_id: v.nullable(v.string()),
        flags: v.array(Flag),
      }),
    ),
  }),
);

const Beat = {
  host: v.string(),
  pid: v.number(),
  started_at: DateTime,
  beat_at: DateTime,
  live: v.boolean(),
};

export const ServerHealth = component(
  'ServerHealth',
  v.strictObject({
    nodes: v.array(v.strictObject({ node_id: v.string(), role: v.string(), ...Beat })),
    workers: v.array(v.strictObject({ worker_id: v.string(), ...Beat })),
    jobs: v.strictObject({
      ready: v.number(),
      scheduled: v.number(),
      running: v.number(),
      failed: v.number(),
      oldest_ready_seconds: v.nullable(v.number()),
    }),
    blobs: v.strictObject({
      store: v.picklist(['postgres', 's3']),
      bucket: v.nullable(v.string()),
      by_location: v.array(
        v.strictObject({ stored_in: v.string(), count: v.number(), bytes: v.number() }),
      ),
    }),
    postgres: v.strictObject({
      embedded: v.boolean(),
      version: v.string(),
      database_bytes: v.number(),
      connections: v.number(),
      pool: v.strictObject({ total: v.number(), idle: v.number(), waiting: v.number() }),
    }),
  }),
);

export const OperatorAction = component(
  'OperatorAction',
  v.strictObject({
    id: v.string(),
    at: DateTime,
    actor_user_id: v.nullable(v.string()),
    actor_email: v.nullable(v.string()),
    actor_label: v.string(),
    action: v.string(),
    account_id: v.nullable(v.string()),
    app_id: v.nullable(v.string()),
    detail: v.record(v.string(), v.unknown()),
  }),
);

export const OperatorActionList = component(
  'OperatorActionList',
  v.strictObject({ actions: v.array(OperatorAction), cursor: v.nullable(v.string()) }),
);

export const OperatorList = component(
  'OperatorList',
  v.strictObject({
    operators: v.array(
      v.strictObject({
        user_id: v.string(),
        email: v.string(),
        granted_by: v.string(),
        granted_at: DateTime,
      }),
    ),
  }),
);

/** What `PUT .../plan` did: the plan now and before, and what a forced downgrade disabled. */
export const OperatorPlanResult = component(
  'OperatorPlanResult',
  v.strictObject({
    account_id: v.string(),
    plan_key: v.picklist(PLAN_KEYS),
    previous_plan_key: v.string(),
    compatible: v.boolean(),
    violations: v.array(PlanViolation),
    actions: v.array(PlanChangeAction),
  }),
);

/** A flag set (`set: true`) or lifted (`cleared`: whether it was there), on an account or an app. */
export const OperatorFlagResult = component(
  'OperatorFlagResult',
  v.strictObject({
    account_id: v.optional(v.string()),
    app_id: v.optional(v.string()),
    flag: v.string(),
    set: v.optional(v.boolean()),
    cleared: v.optional(v.boolean()),
  }),
);

export const OperatorBillingStateResult = component(
  'OperatorBillingStateResult',
  v.strictObject({
    account_id: v.string(),
    billing_access_state: v.picklist(['active', 'past_due_grace', 'restricted']),
    grace_ends_at: v.nullable(DateTime),
  }),
);

export const SetPlanRequest = v.strictObject({
  plan: v.picklist(PLAN_KEYS, `must be one of ${PLAN_KEYS.join(', ')}`),
  force: v.optional(v.boolean()),
});

export const FlagRequest = v.strictObject({
  reason: v.pipe(v.string(), v.trim(), v.minLength(1, 'give a reason'), v.maxLength(500)),
});

export const BillingStateRequest = v.strictObject({
  state: v.picklist(['active', 'past_due_grace', 'restricted']),
  grace_days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(90))),
});

export const decodeActionCursor = (c: string) => (/^\d{1,18}$/.test(c) ? Number(c) : undefined);

export const AccountsQuery = v.strictObject({
  q: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200),
      v.check((s) => !s.includes('\0'), 'must not contain NUL'),
    ),
  ),
  ...pageQuery(timeIdCursor.decode),
});
export const ActionsQuery = v.strictObject({ ...pageQuery(decodeActionCursor) });

export const BackupRunRecord = component(
  'BackupRun',
  v.strictObject({
    backup_id: v.string(),
    trigger: v.picklist(['schedule', 'console', 'admin']),
    requested_by: v.nullable(v.string()),
    status: v.picklist(['queued', 'running', 'succeeded', 'failed']),
    queued_at: DateTime,
    started_at: v.nullable(DateTime),
    finished_at: v.nullable(DateTime),
    location: v.nullable(v.string()),
    bytes: v.nullable(v.number()),
    rows: v.nullable(v.number()),
    error: v.nullable(v.string()),
  }),
);

export const BackupOverview = component(
  'BackupOverview',
  v.strictObject({
    backups: v.array(BackupRunRecord),
    to: v.string(),
    keep: v.number(),
    schedule: v.nullable(v.string()),
    restore_command: v.string(),
  }),
);

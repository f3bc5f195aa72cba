/** The event log's records (contract: EventSummary and the events page). */
import * as v from 'valibot';
import { component, DateTime, FreeObject } from '../openapi/components.ts';

const Level = v.picklist(['debug', 'info', 'warn', 'error']);

export const EventSummary = component(
  'EventSummary',
  v.strictObject({
    app_event_id: v.string(),
    release_id: v.optional(v.nullable(v.string())),
    app_user_id: v.optional(v.nullable(v.string())),
    api_key_id: v.optional(v.nullable(v.string())),
    request_id: v.optional(v.nullable(v.string())),
    type: v.string(),
    event_type: v.string(),
    severity: Level,
    level: Level,
    message: v.string(),
    metadata: FreeObject,
    created_at: DateTime,
  }),
);
export type EventSummary = v.InferOutput<typeof EventSummary>;

export const EventPage = component(
  'EventPage',
  v.strictObject({
    app_id: v.string(),
    events: v.array(EventSummary),
    cursor: v.nullable(v.string()),
  }),
);
export type EventPage = v.InferOutput<typeof EventPage>;

export const EventTypeList = component(
  'EventTypeList',
  v.strictObject({
    app_id: v.string(),
    types: v.array(v.strictObject({ type: v.string(), count: v.number(), last_at: DateTime })),
  }),
);

export const EventGroupList = component(
  'EventGroupList',
  v.strictObject({
    app_id: v.string(),
    groups: v.array(
      v.strictObject({
        type: v.string(),
        severity: v.picklist(['debug', 'info', 'warn', 'error']),
        message: v.string(),
        count: v.number(),
        first_at: DateTime,
        last_at: DateTime,
        /** the latest occurrence, in full */
        last: EventSummary,
      }),
    ),
  }),
);

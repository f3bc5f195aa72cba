/** The bindings browser's records: what an app keeps in KV, R2 and its queues, as the team sees it. */
import * as v from 'valibot';
import { component, DateTime } from '../openapi/components.ts';

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const BindingsOverview = component(
  'BindingsOverview',
  v.strictObject({
    app_id: v.string(),
    /** every namespace the live release binds or that holds keys (a release that stopped binding one keeps its data) */
    kv: v.array(
      v.strictObject({ namespace: v.string(), bound: v.boolean(), keys: Count, bytes: Count }),
    ),
    r2: v.array(
      v.strictObject({ bucket: v.string(), bound: v.boolean(), objects: Count, bytes: Count }),
    ),
    queues: v.array(
      v.strictObject({
        queue: v.string(),
        /** the live release sends to it / consumes it */
        produced: v.boolean(),
        consumed: v.boolean(),
        /** waiting and visible; waiting for a delay or a retry's delay; taken by a delivery now */
        ready: Count,
        delayed: Count,
        in_flight: Count,
        /** of those waiting here, how many were dead-lettered from another queue (retry sends them back) */
        dead_lettered: Count,
        dead_letter_queue: v.nullable(v.string()),
      }),
    ),
  }),
);

export const KvKeyPage = component(
  'KvKeyPage',
  v.strictObject({
    app_id: v.string(),
    namespace: v.string(),
    keys: v.array(
      v.strictObject({
        name: v.string(),
        /** seconds since the epoch, as KV gives it */
        expiration: v.nullable(v.number()),
        metadata: v.unknown(),
      }),
    ),
    cursor: v.nullable(v.string()),
  }),
);

export const KvValue = component(
  'KvValue',
  v.strictObject({
    namespace: v.string(),
    key: v.string(),
    size: Count,
    /** the value as UTF-8 text, or null when it is not text (then `base64` holds it) */
    text: v.nullable(v.string()),
    base64: v.nullable(v.string()),
    metadata: v.unknown(),
    expiration: v.nullable(v.number()),
  }),
);

export const KvValuePut = component(
  'KvValuePut',
  v.strictObject({
    value: v.pipe(v.string(), v.maxLength(25 * 1024 * 1024)),
    metadata: v.optional(v.unknown()),
    expiration_ttl: v.optional(v.pipe(v.number(), v.integer())),
  }),
);

export const KvValueDeleted = component(
  'KvValueDeleted',
  v.strictObject({ namespace: v.string(), key: v.string(), deleted: v.literal(true) }),
);

export const R2ObjectPage = component(
  'R2ObjectPage',
  v.strictObject({
    app_id: v.string(),
    bucket: v.string(),
    objects: v.array(
      v.strictObject({
        key: v.string(),
        size: Count,
        etag: v.string(),
        uploaded: DateTime,
        content_type: v.nullable(v.string()),
      }),
    ),
    /** with `delimiter`: the folders at this level */
    prefixes: v.array(v.string()),
    cursor: v.nullable(v.string()),
  }),
);

export const R2ObjectDeleted = component(
  'R2ObjectDeleted',
  v.strictObject({ bucket: v.string(), key: v.string(), deleted: v.literal(true) }),
);

export const QueuePurged = component(
  'QueuePurged',
  v.strictObject({ queue: v.string(), purged: Count }),
);

export const QueueMessagePage = component(
  'QueueMessagePage',
  v.strictObject({
    app_id: v.string(),
    queue: v.string(),
    /** oldest first */
    messages: v.array(
      v.strictObject({
        id: v.string(),
        state: v.picklist(['ready', 'delayed', 'in_flight']),
        content_type: v.picklist(['text', 'json', 'bytes', 'v8']),
        size: Count,
        /** deliveries so far (reset when a dead letter is sent back) */
        attempts: Count,
        /** a text or JSON body, cut to 1,000 characters; null for bytes and v8 */
        preview: v.nullable(v.string()),
        sent_at: DateTime,
        /** when a delivery may take it next */
        visible_at: DateTime,
        /** the queue it failed in, for a dead letter */
        dead_lettered_from: v.nullable(v.string()),
      }),
    ),
    cursor: v.nullable(v.string()),
  }),
);

export const QueueRetry = component(
  'QueueRetry',
  v.strictObject({
    /** the messages to retry; all waiting ones when left out */
    message_ids: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(100))),
  }),
);

export const QueueRetried = component(
  'QueueRetried',
  v.strictObject({
    queue: v.string(),
    /** messages made visible now */
    retried: Count,
    /** of those, dead letters sent back to the queue they failed in */
    returned: Count,
  }),
);

export const QueueMessagesQuery = v.strictObject({
  cursor: v.optional(v.pipe(v.string(), v.maxLength(512))),
  limit: v.optional(v.pipe(v.string(), v.regex(/^\d{1,3}$/), v.transform(Number))),
});

const Name = v.pipe(v.string(), v.minLength(1), v.maxLength(1024));
export const KvKeysQuery = v.strictObject({
  prefix: v.optional(v.pipe(v.string(), v.maxLength(512))),
  /** keys whose name, value or metadata hold this text (a value over 64 KiB is not searched) */
  search: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(2048))),
  limit: v.optional(v.pipe(v.string(), v.regex(/^\d{1,4}$/), v.transform(Number))),
});
export const KvKeyQuery = v.strictObject({ key: Name });
export const R2ObjectsQuery = v.strictObject({
  prefix: v.optional(v.pipe(v.string(), v.maxLength(1024))),
  delimiter: v.optional(v.pipe(v.string(), v.maxLength(16))),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});
export const R2KeyQuery = v.strictObject({ key: v.pipe(v.string(), v.maxLength(1024)) });

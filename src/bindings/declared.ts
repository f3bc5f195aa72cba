/**
 * The bindings a release declares (Workers KV namespaces, R2 buckets and Queues), as the release carries them:
 * `.platform/bindings.json`, written by the CLI from the project's wrangler config. The contract's
 * publish body has no member for them (docs/decisions/bindings.md), so they travel as a release
 * file, are checked at publish (a malformed file refuses the publish), and are read by the origin
 * with the release's other files. A binding's data is the app's, by its name: a release that stops
 * declaring it keeps the data for the next one that does.
 */
import * as v from 'valibot';

export const BINDINGS_PATH = '.platform/bindings.json';
/** Where a D1 binding's migrations travel in a release: `.platform/d1/<binding>/<file>.sql`. */
export const D1_MIGRATIONS_PREFIX = '.platform/d1/';

/** What app code reads it as (`env.CACHE`): a JavaScript identifier, as wrangler requires. */
const BindingName = v.pipe(
  v.string(),
  v.regex(
    /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/,
    'must be a JavaScript identifier of 1 to 64 characters',
  ),
);

const KvNamespace = v.strictObject({ binding: BindingName });

/** A queue's name, as Cloudflare allows it: letters, digits and dashes, up to 63. */
const QueueName = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9-]{0,62}$/, 'must be 1 to 63 letters, digits and dashes'),
);
const Seconds = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(max));

const QueueProducer = v.strictObject({
  binding: BindingName,
  queue: QueueName,
  delivery_delay: v.optional(Seconds(43_200)),
});
const QueueConsumer = v.strictObject({
  queue: QueueName,
  max_batch_size: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))),
  max_batch_timeout: v.optional(Seconds(60)),
  max_retries: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(100))),
  dead_letter_queue: v.optional(QueueName),
  retry_delay: v.optional(Seconds(43_200)),
});

/** An R2 bucket's name, as R2 allows it: 3 to 63 lowercase letters, digits and dashes. */
const BucketName = v.pipe(
  v.string(),
  v.regex(
    /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/,
    'must be 3 to 63 lowercase letters, digits and dashes',
  ),
);
const R2Bucket = v.strictObject({ binding: BindingName, bucket_name: BucketName });

/** A D1 database's name, as wrangler allows it: letters, digits, dashes and underscores, up to 64. */
const DatabaseName = v.pipe(
  v.string(),
  v.regex(
    /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/,
    'must be 1 to 64 letters, digits, dashes and underscores',
  ),
);
const D1Database = v.strictObject({ binding: BindingName, database_name: DatabaseName });

export const BindingsFile = v.strictObject({
  kv_namespaces: v.optional(v.pipe(v.array(KvNamespace), v.maxLength(64)), []),
  r2_buckets: v.optional(v.pipe(v.array(R2Bucket), v.maxLength(64)), []),
  d1_databases: v.optional(v.pipe(v.array(D1Database), v.maxLength(64)), []),
  queues: v.optional(
    v.strictObject({
      producers: v.optional(v.pipe(v.array(QueueProducer), v.maxLength(64)), []),
      consumers: v.optional(v.pipe(v.array(QueueConsumer), v.maxLength(64)), []),
    }),
    {},
  ),
});

/** How a queue's consumer takes its messages: Cloudflare's settings, with its defaults where unset. */
export type QueueConsumerSettings = {
  maxBatchSize: number;
  maxBatchTimeout: number;
  maxRetries: number;
  deadLetterQueue: string | null;
  retryDelay: number;
};
export const QUEUE_DEFAULTS = { maxBatchSize: 10, maxBatchTimeout: 5, maxRetries: 3 } as const;

export type Bindings = {
  kv: string[];
  /** R2 bucket bindings by name: the bucket each reads */
  r2: Record<string, string>;
  /** D1 bindings by name: the database each reads */
  d1: Record<string, string>;
  /** producer bindings by name: the queue each sends to */
  producers: Record<string, { queue: string; deliveryDelay: number }>;
  /** consumers by queue name */
  consumers: Record<string, QueueConsumerSettings>;
};

/** What the guest needs to build `env`: each binding's name and kind. */
export type GuestBindings = Record<string, { type: 'kv' | 'queue' | 'r2' | 'd1'; name: string }>;

/** The file's bindings, or the problems that make it unreadable (by path within it). */
export function parseBindings(
  text: string,
): { ok: true; bindings: Bindings } | { ok: false; problems: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [`is not JSON: ${(err as Error).message}`] };
  }
  const r = v.safeParse(BindingsFile, json);
  if (!r.success)
    return {
      ok: false,
      problems: r.issues.map((i) => {
        const at = v.getDotPath(i);
        return at ? `${at}: ${i.message}` : i.message;
      }),
    };
  const kv = r.output.kv_namespaces.map((k) => k.binding);
  const queues = r.output.queues;
  const names = [
    ...kv,
    ...r.output.r2_buckets.map((b) => b.binding),
    ...r.output.d1_databases.map((b) => b.binding),
    ...(queues.producers ?? []).map((p) => p.binding),
  ];
  const twice = names.find((b, i) => names.indexOf(b) !== i);
  if (twice) return { ok: false, problems: [`binding ${twice} is declared twice`] };
  const consumers: Bindings['consumers'] = {};
  for (const c of queues.consumers ?? []) {
    if (consumers[c.queue])
      return { ok: false, problems: [`queue ${c.queue} has two consumers: a queue has one`] };
    if (c.dead_letter_queue === c.queue)
      return { ok: false, problems: [`queue ${c.queue} cannot be its own dead letter queue`] };
    consumers[c.queue] = {
      maxBatchSize: c.max_batch_size ?? QUEUE_DEFAULTS.maxBatchSize,
      maxBatchTimeout: c.max_batch_timeout ?? QUEUE_DEFAULTS.maxBatchTimeout,
      maxRetries: c.max_retries ?? QUEUE_DEFAULTS.maxRetries,
      deadLetterQueue: c.dead_letter_queue ?? null,
      retryDelay: c.retry_delay ?? 0,
    };
  }
  const producers: Bindings['producers'] = {};
  for (const p of queues.producers ?? [])
    producers[p.binding] = { queue: p.queue, deliveryDelay: p.delivery_delay ?? 0 };
  const r2: Bindings['r2'] = {};
  for (const b of r.output.r2_buckets) r2[b.binding] = b.bucket_name;
  const d1: Bindings['d1'] = {};
  for (const b of r.output.d1_databases) d1[b.binding] = b.database_name;
  return { ok: true, bindings: { kv, r2, d1, producers, consumers } };
}

export const NO_BINDINGS: Bindings = { kv: [], r2: {}, d1: {}, producers: {}, consumers: {} };

export function guestBindings(b: Bindings): GuestBindings {
  const out: GuestBindings = {};
  for (const name of b.kv) out[name] = { type: 'kv', name };
  for (const name of Object.keys(b.producers)) out[name] = { type: 'queue', name };
  for (const name of Object.keys(b.r2)) out[name] = { type: 'r2', name };
  for (const name of Object.keys(b.d1)) out[name] = { type: 'd1', name };
  return out;
}

/** What a release's files declare (a release that went live once was checked then). */
export function bindingsOfFiles(files: { path: string; bytes: Uint8Array }[]): Bindings {
  const f = files.find((x) => x.path === BINDINGS_PATH);
  if (!f) return NO_BINDINGS;
  const parsed = parseBindings(new TextDecoder().decode(f.bytes));
  return parsed.ok ? parsed.bindings : NO_BINDINGS;
}

/**
 * `/v0/apps/:app_id/bindings`, `…/kv/:namespace/…`, `…/r2/:bucket/…`, `…/queues/:queue/purge`:
 * what an app keeps in its bindings, from the console, the CLI or a script (as `wrangler kv`,
 * `wrangler r2 object` and `wrangler queues` do on Cloudflare). Every member reads; owners, admins
 * and developers write and delete, each change an event naming who. Keys travel as the `key` query
 * parameter (KV and R2 keys hold `/` and any other character).
 */
import { Hono, type Context } from 'hono';
import { appAccess } from '../apps/access.ts';
import { errors } from '../errors.ts';
import { recordEvents } from '../events/record.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody, query, queryOf } from '../http/validate.ts';
import { kvDelete, kvGet, kvList, kvPut } from './kv.ts';
import { bindingsOverview, liveBindings, purgeQueue } from './overview.ts';
import { listQueueMessages, retryQueueMessages } from './queue-browse.ts';
import { r2Delete, r2Get } from './r2.ts';
import { streamPieces } from './r2-bytes.ts';
import { r2List } from './r2-list.ts';
import {
  BindingsOverview,
  KvKeyPage,
  KvKeyQuery,
  KvKeysQuery,
  KvValue,
  KvValueDeleted,
  KvValuePut,
  QueueMessagePage,
  QueueMessagesQuery,
  QueuePurged,
  QueueRetried,
  QueueRetry,
  R2KeyQuery,
  R2ObjectDeleted,
  R2ObjectPage,
  R2ObjectsQuery,
} from './schemas.ts';

const tags = ['Bindings'];
const overview = operation({
  operationId: 'getBindings',
  summary: "The app's KV namespaces, R2 buckets and queues, with what each holds",
  description:
    'Every one the live release binds, and every one that still holds data after a release stopped binding it.',
  tags,
  responses: { 200: BindingsOverview },
});
const keys = operation({
  operationId: 'listKvKeys',
  summary: "A page of a KV namespace's keys, in byte order",
  description:
    '`prefix` as `list()` takes it; `search` finds keys whose name, value or metadata hold the text (values over 64 KiB, kept in the blob store, are not searched).',
  tags,
  responses: { 200: KvKeyPage },
});
const value = operation({
  operationId: 'getKvValue',
  summary: 'One KV value, as text or base64, with its metadata',
  tags,
  responses: { 200: KvValue },
});
const put = operation({
  operationId: 'putKvValue',
  summary: 'Write a KV value (text), as `env.NS.put` writes it',
  description: "KV's limits and messages apply. Recorded as `kv.changed_by_member`.",
  tags,
  responses: { 200: KvValue },
  errors: ['quota_exceeded'],
});
const removeKey = operation({
  operationId: 'deleteKvValue',
  summary: 'Delete a KV key',
  description: 'Recorded as `kv.deleted_by_member`.',
  tags,
  responses: { 200: KvValueDeleted },
});
const objects = operation({
  operationId: 'listR2Objects',
  summary: "A page of an R2 bucket's objects (100 at most), in byte order",
  tags,
  responses: { 200: R2ObjectPage },
});
const download = operation({
  operationId: 'downloadR2Object',
  summary: "An R2 object's bytes, as a download",
  description:
    "With the object's own content type; always `Content-Disposition: attachment` and a sandboxing CSP, so an HTML or SVG object never runs on the platform's hosts (an `<img>` still shows an image).",
  tags,
  responses: { 200: null },
  text: { contentType: 'application/octet-stream', example: 'the object’s bytes' },
});
const removeObject = operation({
  operationId: 'deleteR2Object',
  summary: 'Delete an R2 object',
  description: 'Recorded as `r2.deleted_by_member`.',
  tags,
  responses: { 200: R2ObjectDeleted },
});
const messages = operation({
  operationId: 'listQueueMessages',
  summary: "A page of a queue's messages (50, at most 100), oldest first",
  description:
    'Ready, delayed and in-flight messages with their attempts and a preview of text and JSON bodies; in a dead letter queue, each names the queue it failed in.',
  tags,
  responses: { 200: QueueMessagePage },
});
const retry = operation({
  operationId: 'retryQueueMessages',
  summary: "Retry a queue's waiting messages now (named ones, or all)",
  description:
    'A delayed message is made visible now; a dead letter goes back to the queue it failed in, its attempts reset. A batch being delivered is left to finish. Recorded as `queue.retried_by_member`.',
  tags,
  responses: { 200: QueueRetried },
});
const purge = operation({
  operationId: 'purgeQueue',
  summary: "Delete a queue's waiting messages (a batch being delivered is left to finish)",
  description: 'Recorded as `queue.purged_by_member`.',
  tags,
  responses: { 200: QueuePurged },
});

const targetOf = (c: Context<Env>) => ({
  appId: c.var.app.id,
  accountId: c.var.app.account_id,
});

async function changed(c: Context<Env>, type: string, message: string, metadata: object) {
  await recordEvents(c.var.deps.db, [
    {
      app_id: c.var.app.id,
      account_id: c.var.app.account_id,
      type,
      message: `${message} by ${c.var.actor.email}.`,
      metadata: { ...metadata, by: c.var.actor.email },
      api_key_id: c.var.actor.apiKeyId,
      request_id: c.var.requestId,
    },
  ]);
}

async function valueOf(c: Context<Env>, namespace: string, key: string) {
  const got = await kvGet(c.var.deps, targetOf(c), namespace, key, {});
  if (!got) throw errors.notFound('Key');
  const text = new TextDecoder('utf-8', { fatal: true });
  let asText: string | null = null;
  try {
    asText = text.decode(got.bytes);
  } catch {}
  return {
    namespace,
    key,
    size: got.bytes.length,
    text: asText,
    base64: asText === null ? got.bytes.toString('base64') : null,
    metadata: got.metadata ?? null,
    expiration: got.expiration ?? null,
  };
}

export function bindingRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/:app_id/bindings', overview, appAccess('data.read'), async (c) =>
    overview.reply(
      c,
      200,
      await bindingsOverview(c.var.deps, c.var.app.id, await liveBindings(c.var.deps, c.var.app)),
    ),
  );

  r.get(
    '/:app_id/kv/:namespace/keys',
    keys,
    appAccess('data.read'),
    query(KvKeysQuery),
    async (c) => {
      const q = queryOf(c, KvKeysQuery);
      const namespace = c.req.param('namespace');
      const page = await kvList(
        c.var.deps,
        targetOf(c),
        namespace,
        { prefix: q.prefix, limit: q.limit ?? 100, cursor: q.cursor },
        q.search,
      );
      return keys.reply(c, 200, {
        app_id: c.var.app.id,
        namespace,
        keys: page.keys.map((k) => ({
          name: k.name,
          expiration: k.expiration ?? null,
          metadata: k.metadata ?? null,
        })),
        cursor: page.cursor ?? null,
      });
    },
  );

  r.get(
    '/:app_id/kv/:namespace/value',
    value,
    appAccess('data.read'),
    query(KvKeyQuery),
    async (c) =>
      value.reply(c, 200, await valueOf(c, c.req.param('namespace'), queryOf(c, KvKeyQuery).key)),
  );

  r.put(
    '/:app_id/kv/:namespace/value',
    put,
    appAccess('data.write'),
    query(KvKeyQuery),
    jsonBody(KvValuePut),
    async (c) => {
      const namespace = c.req.param('namespace');
      const { key } = queryOf(c, KvKeyQuery);
      const b = bodyOf(c, KvValuePut);
      await kvPut(c.var.deps, targetOf(c), namespace, key, Buffer.from(b.value, 'utf8'), {
        metadata: b.metadata === undefined ? undefined : JSON.stringify(b.metadata),
        expirationTtl: b.expiration_ttl,
      });
      await changed(c, 'kv.changed_by_member', `KV key ${key} of ${namespace} was written`, {
        namespace,
        key,
      });
      return put.reply(c, 200, await valueOf(c, namespace, key));
    },
  );

  r.delete(
    '/:app_id/kv/:namespace/value',
    removeKey,
    appAccess('data.write'),
    query(KvKeyQuery),
    async (c) => {
      const namespace = c.req.param('namespace');
      const { key } = queryOf(c, KvKeyQuery);
      if (!(await kvDelete(c.var.deps, targetOf(c), namespace, key))) throw errors.notFound('Key');
      await changed(c, 'kv.deleted_by_member', `KV key ${key} of ${namespace} was deleted`, {
        namespace,
        key,
      });
      return removeKey.reply(c, 200, { namespace, key, deleted: true });
    },
  );

  r.get(
    '/:app_id/r2/:bucket/objects',
    objects,
    appAccess('data.read'),
    query(R2ObjectsQuery),
    async (c) => {
      const q = queryOf(c, R2ObjectsQuery);
      const bucket = c.req.param('bucket');
      const page = await r2List(c.var.deps, targetOf(c), bucket, {
        prefix: q.prefix,
        delimiter: q.delimiter,
        cursor: q.cursor,
        limit: 100,
        include: ['httpMetadata'],
      });
      return objects.reply(c, 200, {
        app_id: c.var.app.id,
        bucket,
        objects: page.objects.map((o) => ({
          key: o.key,
          size: o.size,
          etag: o.etag,
          uploaded: o.uploaded,
          content_type: o.httpMetadata.contentType ?? null,
        })),
        prefixes: page.delimitedPrefixes,
        cursor: page.cursor ?? null,
      });
    },
  );

  r.get(
    '/:app_id/r2/:bucket/object',
    download,
    appAccess('data.read'),
    query(R2KeyQuery),
    async (c) => {
      const bucket = c.req.param('bucket');
      const { key } = queryOf(c, R2KeyQuery);
      const got = await r2Get(c.var.deps, targetOf(c), bucket, key, {});
      if (!got?.pieces) throw errors.notFound('Object');
      const name = key.split('/').pop() || 'object';
      const body = streamPieces(c.var.deps, c.var.app.account_id, got.pieces, 0, got.meta.size);
      return c.body(body, 200, {
        'content-length': String(got.meta.size),
        'content-type': got.meta.httpMetadata.contentType ?? 'application/octet-stream',
        'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
        'content-security-policy': "default-src 'none'; sandbox",
        'x-content-type-options': 'nosniff',
        etag: `"${got.meta.etag}"`,
      });
    },
  );

  r.delete(
    '/:app_id/r2/:bucket/object',
    removeObject,
    appAccess('data.write'),
    query(R2KeyQuery),
    async (c) => {
      const bucket = c.req.param('bucket');
      const { key } = queryOf(c, R2KeyQuery);
      if (!(await r2Delete(c.var.deps, targetOf(c), bucket, key))) throw errors.notFound('Object');
      await changed(c, 'r2.deleted_by_member', `R2 object ${key} of ${bucket} was deleted`, {
        bucket,
        key,
      });
      return removeObject.reply(c, 200, { bucket, key, deleted: true });
    },
  );

  r.get(
    '/:app_id/queues/:queue/messages',
    messages,
    appAccess('data.read'),
    query(QueueMessagesQuery),
    async (c) => {
      const queue = c.req.param('queue');
      const q = queryOf(c, QueueMessagesQuery);
      const page = await listQueueMessages(c.var.deps, c.var.app.id, queue, q);
      return messages.reply(c, 200, { app_id: c.var.app.id, queue, ...page });
    },
  );

  r.post(
    '/:app_id/queues/:queue/retry',
    retry,
    appAccess('data.write'),
    jsonBody(QueueRetry),
    async (c) => {
      const queue = c.req.param('queue');
      const ids = bodyOf(c, QueueRetry).message_ids;
      const done = await retryQueueMessages(c.var.deps, c.var.app.id, queue, ids);
      await changed(
        c,
        'queue.retried_by_member',
        `${done.retried} messages of queue ${queue} were retried`,
        { queue, ...done },
      );
      return retry.reply(c, 200, { queue, ...done });
    },
  );

  r.post('/:app_id/queues/:queue/purge', purge, appAccess('data.write'), async (c) => {
    const queue = c.req.param('queue');
    const purged = await purgeQueue(c.var.deps, c.var.app.id, queue);
    await changed(c, 'queue.purged_by_member', `Queue ${queue} was purged (${purged} messages)`, {
      queue,
      purged,
    });
    return purge.reply(c, 200, { queue, purged });
  });

  return r;
}

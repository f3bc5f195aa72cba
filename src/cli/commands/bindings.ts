/**
 * `platform kv`, `platform r2` and `platform queues`: what an app keeps in its bindings, from the
 * terminal, as `wrangler kv key`, `wrangler r2 object` and `wrangler queues` do on Cloudflare (over
 * the bindings API: src/bindings/routes.ts).
 */
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { formatBytes } from '../../lib/bytes.ts';
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { appOpt, examples, jsonOpt } from '../command-kit.ts';
import { c, printJson, table } from '../output.ts';

type Opts = { app?: string; json?: boolean };

async function client(opts: Opts) {
  return { appId: await resolveAppId(opts.app), api: await createApi() };
}

async function bindingsList(opts: Opts): Promise<void> {
  const { appId, api } = await client(opts);
  const r = await api.request('GET /v0/apps/{app_id}/bindings', { params: { app_id: appId } });
  if (opts.json) return printJson(r);
  const bound = (b: boolean) => (b ? 'yes' : c.dim('no (data kept)'));
  const out = [
    c.bold('KV namespaces'),
    table(
      r.kv.map((k) => ({
        namespace: k.namespace,
        keys: k.keys,
        size: formatBytes(k.bytes),
        bound: bound(k.bound),
      })),
      ['namespace', 'keys', 'size', 'bound'],
    ),
    '',
    c.bold('R2 buckets'),
    table(
      r.r2.map((b) => ({
        bucket: b.bucket,
        objects: b.objects,
        size: formatBytes(b.bytes),
        bound: bound(b.bound),
      })),
      ['bucket', 'objects', 'size', 'bound'],
    ),
    '',
    c.bold('Queues'),
    table(
      r.queues.map((q) => ({
        queue: q.queue,
        ready: q.ready,
        delayed: q.delayed,
        'in flight': q.in_flight,
        'dead letters': q.dead_lettered,
        consumed: q.consumed ? 'yes' : c.yellow('no: messages wait'),
        'dead letters to': q.dead_letter_queue,
      })),
      ['queue', 'ready', 'delayed', 'in flight', 'dead letters', 'consumed', 'dead letters to'],
    ),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

async function kvList(
  namespace: string,
  opts: Opts & { prefix?: string; search?: string },
): Promise<void> {
  const { appId, api } = await client(opts);
  const keys: { name: string; expiration: number | null; metadata: unknown }[] = [];
  let cursor: string | undefined;
  do {
    const r = await api.request('GET /v0/apps/{app_id}/kv/{namespace}/keys', {
      params: { app_id: appId, namespace },
      query: {
        ...(opts.prefix ? { prefix: opts.prefix } : {}),
        ...(opts.search ? { search: opts.search } : {}),
        ...(cursor ? { cursor } : {}),
        limit: '1000',
      },
    });
    keys.push(...r.keys);
    cursor = r.cursor ?? undefined;
  } while (cursor);
  if (opts.json) return printJson(keys);
  const when = (s: number | null) => (s === null ? null : new Date(s * 1000).toISOString());
  process.stdout.write(
    `${table(
      keys.map((k) => ({
        key: k.name,
        expires: when(k.expiration),
        metadata: k.metadata === null ? null : JSON.stringify(k.metadata),
      })),
      ['key', 'expires', 'metadata'],
    )}\n`,
  );
}

async function kvGet(namespace: string, key: string, opts: Opts): Promise<void> {
  const { appId, api } = await client(opts);
  const r = await api.request('GET /v0/apps/{app_id}/kv/{namespace}/value', {
    params: { app_id: appId, namespace },
    query: { key },
  });
  if (opts.json) return printJson(r);
  // the value itself on stdout, as `wrangler kv key get` prints it
  if (r.text !== null) process.stdout.write(r.text);
  else process.stdout.write(Buffer.from(r.base64 ?? '', 'base64'));
}

async function kvPut(
  namespace: string,
  key: string,
  value: string,
  opts: Opts & { ttl?: string; metadata?: string },
): Promise<void> {
  const { appId, api } = await client(opts);
  const r = await api.request('PUT /v0/apps/{app_id}/kv/{namespace}/value', {
    params: { app_id: appId, namespace },
    query: { key },
    body: {
      value,
      ...(opts.metadata ? { metadata: JSON.parse(opts.metadata) } : {}),
      ...(opts.ttl ? { expiration_ttl: Number(opts.ttl) } : {}),
    },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(`${c.green('✔ written')} ${key} in ${namespace} (${formatBytes(r.size)})\n`);
}

async function kvDelete(namespace: string, key: string, opts: Opts): Promise<void> {
  const { appId, api } = await client(opts);
  const r = await api.request('DELETE /v0/apps/{app_id}/kv/{namespace}/value', {
    params: { app_id: appId, namespace },
    query: { key },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(`${c.green('✔ deleted')} ${key} from ${namespace}\n`);
}

async function r2List(bucket: string, opts: Opts & { prefix?: string }): Promise<void> {
  const { appId, api } = await client(opts);
  const r = await api.request('GET /v0/apps/{app_id}/r2/{bucket}/objects', {
    params: { app_id: appId, bucket },
    query: { ...(opts.prefix ? { prefix: opts.prefix } : {}), delimiter: '/' },
  });
  if (opts.json) return printJson(r);
  const rows = [
    ...r.prefixes.map((p) => ({ key: p, size: c.dim('folder'), type: null, uploaded: null })),
    ...r.objects.map((o) => ({
      key: o.key,
      size: formatBytes(o.size),
      type: o.content_type,
      uploaded: o.uploaded,
    })),
  ];
  process.stdout.write(
    `${table(rows, ['key', 'size', 'type', 'uploaded'])}${r.cursor ? `\n${c.dim('(more: narrow with --prefix)')}` : ''}\n`,
  );
}

async function r2Delete(bucket: string, key: string, opts: Opts): Promise<void> {
  const { appId, api } = await client(opts);
  const r = await api.request('DELETE /v0/apps/{app_id}/r2/{bucket}/object', {
    params: { app_id: appId, bucket },
    query: { key },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(`${c.green('✔ deleted')} ${key} from ${bucket}\n`);
}

async function queuePurge(queue: string, opts: Opts): Promise<void> {
  const { appId, api } = await client(opts);
  const r = await api.request('POST /v0/apps/{app_id}/queues/{queue}/purge', {
    params: { app_id: appId, queue },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(`${c.green('✔ purged')} ${r.purged} waiting messages from ${queue}\n`);
}

async function r2Get(bucket: string, key: string, opts: Opts & { file?: string }): Promise<void> {
  const { appId, api } = await client(opts);
  const res = await api.download(
    `/v0/apps/${encodeURIComponent(appId)}/r2/${encodeURIComponent(bucket)}/object?key=${encodeURIComponent(key)}`,
  );
  // streamed to the file or to stdout, never held whole
  const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
  if (!opts.file) return pipeline(body, process.stdout, { end: false });
  await pipeline(body, createWriteStream(opts.file));
  process.stderr.write(
    `${c.green('✔ downloaded')} ${key} (${formatBytes(Number(res.headers.get('content-length') ?? 0))}) to ${opts.file}\n`,
  );
}

async function queueMessages(queue: string, opts: Opts): Promise<void> {
  const { appId, api } = await client(opts);
  const all = [];
  let cursor: string | undefined;
  do {
    const r = await api.request('GET /v0/apps/{app_id}/queues/{queue}/messages', {
      params: { app_id: appId, queue },
      query: { limit: '100', ...(cursor ? { cursor } : {}) },
    });
    all.push(...r.messages);
    cursor = r.cursor ?? undefined;
  } while (cursor && all.length < 1000);
  if (opts.json) return printJson(all);
  process.stdout.write(
    `${table(
      all.map((m) => ({
        id: m.id,
        state: m.state,
        attempts: m.attempts,
        sent: m.sent_at,
        'failed in': m.dead_lettered_from,
        body:
          m.preview === null ? c.dim(`${m.content_type}, ${m.size} bytes`) : m.preview.slice(0, 60),
      })),
      ['id', 'state', 'attempts', 'sent', 'failed in', 'body'],
    )}\n`,
  );
}

async function queueRetry(queue: string, ids: string[], opts: Opts): Promise<void> {
  const { appId, api } = await client(opts);
  const r = await api.request('POST /v0/apps/{app_id}/queues/{queue}/retry', {
    params: { app_id: appId, queue },
    body: ids.length ? { message_ids: ids } : {},
  });
  if (opts.json) return printJson(r);
  const back = r.returned ? ` (${r.returned} sent back to the queue they failed in)` : '';
  process.stdout.write(`${c.green('✔ retried')} ${r.retried} messages of ${queue}${back}\n`);
}

export function addBindingCommands(program: Command): void {
  const kv = program.command('kv').description("the app's Workers KV namespaces");
  examples(
    kv
      .command('list')
      .argument('<namespace>', 'the binding name, as in wrangler.jsonc')
      .description("a namespace's keys")
      .option('--prefix <prefix>')
      .option('--search <text>', 'keys whose name, value or metadata hold this text')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((n, o) => kvList(n, o)),
    [
      'platform kv list CACHE',
      'platform kv list CACHE --prefix user/',
      'platform kv list CACHE --search ada@',
    ],
  );
  examples(
    kv
      .command('get')
      .argument('<namespace>')
      .argument('<key>')
      .description('print a value')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((n, k, o) => kvGet(n, k, o)),
    ['platform kv get CACHE greeting'],
  );
  examples(
    kv
      .command('put')
      .argument('<namespace>')
      .argument('<key>')
      .argument('<value>')
      .description('write a value (text)')
      .option('--ttl <seconds>', 'expire it after this many seconds (at least 60)')
      .option('--metadata <json>')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((n, k, v, o) => kvPut(n, k, v, o)),
    ['platform kv put CACHE greeting hello', 'platform kv put CACHE session:1 "{}" --ttl 3600'],
  );
  examples(
    kv
      .command('delete')
      .argument('<namespace>')
      .argument('<key>')
      .description('delete a key')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((n, k, o) => kvDelete(n, k, o)),
    ['platform kv delete CACHE greeting'],
  );
  const r2 = program.command('r2').description("the app's Workers R2 buckets");
  examples(
    r2
      .command('list')
      .argument('<bucket>', 'the bucket_name, as in wrangler.jsonc')
      .description("a bucket's objects and folders")
      .option('--prefix <prefix>', 'a folder, such as photos/')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((b, o) => r2List(b, o)),
    ['platform r2 list media', 'platform r2 list media --prefix photos/'],
  );
  examples(
    r2
      .command('get')
      .argument('<bucket>')
      .argument('<key>')
      .description('download an object (to stdout, or --file)')
      .option('--file <path>', 'write it to this file')
      .option(...appOpt)
      .action((b, k, o) => r2Get(b, k, o)),
    ['platform r2 get media photos/cat.jpg --file cat.jpg', 'platform r2 get media notes.txt'],
  );
  examples(
    r2
      .command('delete')
      .argument('<bucket>')
      .argument('<key>')
      .description('delete an object')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((b, k, o) => r2Delete(b, k, o)),
    ['platform r2 delete media photos/cat.jpg'],
  );
  const queues = program.command('queues').description("the app's Workers Queues");
  examples(
    queues
      .command('list')
      .description('every KV namespace, R2 bucket and queue, with sizes and queue depths')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((o) => bindingsList(o)),
    ['platform queues list'],
  );
  examples(
    queues
      .command('purge')
      .argument('<queue>')
      .description("delete a queue's waiting messages")
      .option(...appOpt)
      .option(...jsonOpt)
      .action((q, o) => queuePurge(q, o)),
    ['platform queues purge my-queue'],
  );
  examples(
    queues
      .command('messages')
      .argument('<queue>')
      .description(
        "a queue's messages, oldest first: state, attempts, the queue a dead letter failed in",
      )
      .option(...appOpt)
      .option(...jsonOpt)
      .action((q, o) => queueMessages(q, o)),
    ['platform queues messages my-queue', 'platform queues messages my-dlq'],
  );
  examples(
    queues
      .command('retry')
      .argument('<queue>')
      .argument('[ids...]', 'the messages to retry (all waiting ones when none)')
      .description('deliver waiting messages now; dead letters go back to the queue they failed in')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((q, ids, o) => queueRetry(q, ids, o)),
    ['platform queues retry my-dlq', 'platform queues retry my-queue 3f9c…'],
  );
}

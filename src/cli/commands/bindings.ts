/**
 * `platform kv`, `platform r2` and `platform queues`: what an app keeps in its bindings, from the
 * terminal, as `wrangler kv key`, `wrangler r2 object` and `wrangler queues` do on Cloudflare (over
 * the bindings API: src/bindings/routes.ts).
 */
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
        consumed: q.consumed ? 'yes' : c.yellow('no: messages wait'),
        'dead letters to': q.dead_letter_queue,
      })),
      ['queue', 'ready', 'delayed', 'in flight', 'consumed', 'dead letters to'],
    ),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

async function kvList(namespace: string, opts: Opts & { prefix?: string }): Promise<void> {
  const { appId, api } = await client(opts);
  const keys: { name: string; expiration: number | null; metadata: unknown }[] = [];
  let cursor: string | undefined;
  do {
    const r = await api.request('GET /v0/apps/{app_id}/kv/{namespace}/keys', {
      params: { app_id: appId, namespace },
      query: {
        ...(opts.prefix ? { prefix: opts.prefix } : {}),
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

export function addBindingCommands(program: Command): void {
  const kv = program.command('kv').description("the app's Workers KV namespaces");
  examples(
    kv
      .command('list')
      .argument('<namespace>', 'the binding name, as in wrangler.jsonc')
      .description("a namespace's keys")
      .option('--prefix <prefix>')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((n, o) => kvList(n, o)),
    ['platform kv list CACHE', 'platform kv list CACHE --prefix user/'],
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
}

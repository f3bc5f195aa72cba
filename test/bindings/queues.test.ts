/**
 * Workers Queues: create-cloudflare's own `queues` template published unchanged, its message sent
 * and consumed; and a probe app (test/fixtures/bindings/queues-app) that sends every kind of
 * message, retries one, dead-letters one and delays one, compared with Miniflare on the same
 * module: what `send` answers and what the consumer saw (each message, queue and attempt) equal.
 * Deliveries run on a real graphile-worker; every wait is for a condition.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { run, type Runner } from 'graphile-worker';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workerLogger } from '../../src/boot.ts';
import { takeBatch } from '../../src/bindings/queues.ts';
import { WORKER_PRESET } from '../../worker/runner.ts';
import { taskList } from '../../worker/tasks.ts';
import { eventsOf, waitFor } from '../_lib/apps.ts';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { sql } from 'kysely';
import { createHarness, listen, newUser } from '../_lib/harness.ts';
import { startMiniflare } from '../_lib/miniflare.ts';
import { TEMPLATES } from '../_lib/real-apps.ts';

const h = await createHarness({ PLATFORM_SANDBOX_WORKERS: '2' });
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `queues-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const FIXTURE = path.resolve('test/fixtures/bindings/queues-app');
let runner: Runner;

test.before(async () => {
  runner = await run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 100,
    concurrency: 4,
    logger: workerLogger(),
    preset: WORKER_PRESET,
  });
});

const visit = (appId: string, p: string) => h.call('GET', p, { host: `${appId}.apps.localhost` });

test("create-cloudflare's queues template: sent on a request, consumed by its queue()", async () => {
  const dir = path.join(work, 'queues-template');
  await cp(path.join(TEMPLATES, 'queues/js'), dir, { recursive: true });
  const config = path.join(dir, 'wrangler.jsonc');
  // the placeholders create-cloudflare fills in when it writes the project
  await writeFile(
    config,
    (await readFile(config, 'utf8'))
      .replace('<WORKER_NAME>', 'queues-template')
      .replace('<COMPATIBILITY_DATE>', '2024-09-23'),
  );
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, 'queue my-queue: kept and delivered by the platform');
  const appId = await linkedApp(dir);
  const control = await startMiniflare(path.join(dir, 'src/index.js'), {
    queueProducers: { MY_QUEUE: { queueName: 'my-queue' } },
    queueConsumers: { 'my-queue': {} },
  });
  try {
    const [mine, theirs] = [await visit(appId, '/hello?x=1'), await control.fetch('/hello?x=1')];
    assert.is(mine.status, theirs.status);
    assert.is(mine.text, await theirs.text());
  } finally {
    await control.stop();
  }
  // the consumer logs each message it processed: `message <id> processed: {"url":…}`
  const logged = await waitFor(async () => {
    const logs = await eventsOf(h, u.api_key, appId, 'runtime.log.info');
    return logs.find((e) => e.message.includes('processed:'));
  }, 20_000);
  const body = JSON.parse(logged.message.slice(logged.message.indexOf('processed: ') + 11));
  assert.is(body.method, 'GET');
  assert.match(body.url, /\/hello\?x=1$/);
  // the id is 32 hex digits, which the log's secret redaction hides, as it hides any such token
  assert.match(logged.message, /^message \S+ processed/);
  const delivered = await eventsOf(h, u.api_key, appId, 'queue.delivered');
  assert.is(delivered[0]?.metadata.acked, 1);
});

type Seen = { tag: string; queue: string; attempts: number }[];

test('the queues probe app: sends, retries, dead letters and delays as under Miniflare', async () => {
  const dir = path.join(work, 'queues-app');
  await cp(FIXTURE, dir, { recursive: true });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await linkedApp(dir);
  const control = await startMiniflare(path.join(FIXTURE, 'src/index.js'), {
    kvNamespaces: ['SEEN'],
    queueProducers: { PROBE_QUEUE: { queueName: 'probe-queue' } },
    queueConsumers: {
      'probe-queue': {
        maxBatchSize: 4,
        maxBatchTimeout: 1,
        maxRetries: 2,
        deadLetterQueue: 'probe-dlq',
      },
      'probe-dlq': { maxBatchTimeout: 1 },
    },
  });
  try {
    const theirs = await (await control.fetch('/send')).json();
    const mine = await visit(appId, '/send');
    assert.is(mine.status, 200, mine.text);
    assert.equal(mine.body, theirs);
    // json, text, bytes, v8, plain, 3 in a batch, retry-once twice, poison 3 times and in the DLQ, delayed
    const all = 15;
    const seenBy = async (read: () => Promise<Seen>) =>
      waitFor(async () => {
        const s = await read();
        return s.length >= all ? s : undefined;
      }, 30_000);
    const [a, b] = await Promise.all([
      seenBy(async () => (await visit(appId, '/seen')).body as Seen),
      seenBy(async () => (await (await control.fetch('/seen')).json()) as Seen),
    ]);
    assert.equal(a, b);
  } finally {
    await control.stop();
  }
  const dead = await eventsOf(h, u.api_key, appId, 'queue.delivered');
  assert.ok(
    dead.some((e) => e.metadata.deadLettered === 1),
    'the poison message was dead-lettered',
  );
});

test('messages sent while no release consumes their queue are delivered once one does', async () => {
  const source = (consume: boolean) => `export default {
    async fetch(req, env) {
      if (new URL(req.url).pathname === '/send') { await env.Q.send({ n: 1 }); await env.Q.send({ n: 2 }); return new Response('sent'); }
      return Response.json(await env.SEEN.get('got', 'json'));
    },
    ${consume ? `async queue(batch, env) { const got = (await env.SEEN.get('got', 'json')) ?? []; for (const m of batch.messages) got.push(m.body.n); await env.SEEN.put('got', JSON.stringify(got.sort())); }` : ''}
  };`;
  const config = (consume: boolean) =>
    JSON.stringify({
      name: 'queue-later',
      main: 'src/index.js',
      kv_namespaces: [{ binding: 'SEEN' }],
      queues: {
        producers: [{ binding: 'Q', queue: 'later' }],
        consumers: consume ? [{ queue: 'later', max_batch_timeout: 1 }] : [],
      },
    });
  const dir = await writeProject(work, 'queue-later', {
    'wrangler.jsonc': config(false),
    'src/index.js': source(false),
  });
  assert.is((await cli(['publish'], { cwd: dir })).code, 0);
  const appId = await linkedApp(dir);
  assert.is((await visit(appId, '/send')).text, 'sent');
  const waiting = await sql<{ n: number }>`select count(*)::int as n from queue_messages
    where app_id = ${appId} and queue = 'later' and state = 'ready'`.execute(h.deps.db);
  assert.is(waiting.rows[0]!.n, 2, 'kept while nothing consumes them');
  await writeFile(path.join(dir, 'wrangler.jsonc'), config(true));
  await writeFile(path.join(dir, 'src/index.js'), source(true));
  const again = await cli(['publish'], { cwd: dir });
  assert.is(again.code, 0, again.stdout + again.stderr);
  const got = await waitFor(async () => {
    const r = await visit(appId, '/');
    return Array.isArray(r.body) && r.body.length === 2 ? r.body : undefined;
  }, 20_000);
  assert.equal(got, [1, 2]);
});

test('a batch whose delivery died is taken again when its lease ends, its attempt counted', async () => {
  const dir = path.join(work, 'queue-later');
  const appId = await linkedApp(dir);
  await h.deps.db
    .insertInto('queue_messages')
    .values({
      id: 'f'.repeat(32),
      app_id: appId,
      queue: 'orphan',
      content_type: 'json',
      body: '1',
      size: 1,
    })
    .execute();
  const first = await takeBatch(h.deps.db, appId, 'orphan', 10, 300);
  assert.equal(
    first.map((m) => [m.id, m.attempts]),
    [['f'.repeat(32), 1]],
  );
  // nothing settles it (the worker died): within the lease no one else takes it
  assert.equal(await takeBatch(h.deps.db, appId, 'orphan', 10, 300), []);
  const again = await waitFor(async () => {
    const b = await takeBatch(h.deps.db, appId, 'orphan', 10, 60_000);
    return b.length ? b : undefined;
  });
  assert.equal(
    again.map((m) => [m.id, m.attempts, m.body]),
    [['f'.repeat(32), 2, '1']],
  );
});

test('a dead letter is seen with the queue it failed in, and sent back there by a retry', async () => {
  const dir = await writeProject(work, 'queue-dead', {
    'wrangler.jsonc': JSON.stringify({
      name: 'queue-dead',
      main: 'src/index.js',
      kv_namespaces: [{ binding: 'KV' }],
      queues: {
        producers: [{ binding: 'Q', queue: 'orders' }],
        consumers: [
          {
            queue: 'orders',
            max_retries: 0,
            max_batch_timeout: 1,
            dead_letter_queue: 'orders-dlq',
          },
        ],
      },
    }),
    // fails every message until the team fixes what it needs (here: a KV key), then takes it
    'src/index.js': `export default {
      async fetch(req, env) {
        if (new URL(req.url).pathname === '/send') { await env.Q.send({ order: 7 }); return new Response('sent'); }
        return Response.json(await env.KV.get('taken', 'json'));
      },
      async queue(batch, env) {
        if (!(await env.KV.get('fixed'))) return batch.retryAll();
        await env.KV.put('taken', JSON.stringify(batch.messages.map((m) => [m.body, m.attempts])));
      },
    };`,
  });
  const published = await cli(['publish'], { cwd: dir });
  assert.is(published.code, 0, published.stdout + published.stderr);
  const appId = await linkedApp(dir);
  const params = { app_id: appId, queue: 'orders-dlq' };
  assert.is((await visit(appId, '/send')).text, 'sent');
  const dead = await waitFor(async () => {
    const page = await h.api('GET /v0/apps/{app_id}/queues/{queue}/messages', {
      key: u.api_key,
      params,
    });
    return page.messages.length === 1 ? page.messages[0] : undefined;
  }, 20_000);
  assert.equal(
    [dead.state, dead.attempts, dead.preview, dead.dead_lettered_from, dead.content_type],
    ['ready', 0, '{"order":7}', 'orders', 'json'],
  );
  const o = await h.api('GET /v0/apps/{app_id}/bindings', {
    key: u.api_key,
    params: { app_id: appId },
  });
  assert.equal(
    o.queues.map((q) => [q.queue, q.dead_lettered, q.consumed]),
    [
      ['orders', 0, true],
      ['orders-dlq', 1, false],
    ],
  );
  const listed = await cli(['queues', 'messages', 'orders-dlq', '--app', appId]);
  assert.is(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, dead.id);
  assert.match(listed.stdout, /orders\b/);
  // fixed; sent back from the terminal, it is delivered to the queue it failed in
  await h.api('PUT /v0/apps/{app_id}/kv/{namespace}/value', {
    key: u.api_key,
    params: { app_id: appId, namespace: 'KV' },
    query: { key: 'fixed' },
    body: { value: 'yes' },
  });
  const retried = await cli(['queues', 'retry', 'orders-dlq', '--app', appId, '--json']);
  assert.is(retried.code, 0, retried.stderr);
  assert.equal(JSON.parse(retried.stdout), { queue: 'orders-dlq', retried: 1, returned: 1 });
  const taken = await waitFor(async () => (await visit(appId, '/')).body, 20_000);
  assert.equal(taken, [[{ order: 7 }, 1]], 'delivered again, its attempts counted from the start');
  const after = await h.api('GET /v0/apps/{app_id}/queues/{queue}/messages', {
    key: u.api_key,
    params,
  });
  assert.equal(after.messages, []);
  const events = await eventsOf(h, u.api_key, appId, 'queue.retried_by_member');
  assert.match(events[0]!.message, /^1 messages of queue orders-dlq were retried by /);
});

test.after(async () => {
  await runner?.stop();
  await live.close();
  await h.close();
});

test.run();

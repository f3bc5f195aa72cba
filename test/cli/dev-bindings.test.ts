/**
 * `platform dev` on a Workers project with a KV namespace and a queue: the local platform gives the
 * same bindings as a published app gets (the folder's wrangler config read, a value kept, a message
 * delivered to the project's own queue() consumer by the dev platform's job worker).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, writeProject } from '../_lib/cli.ts';
import { request } from '../_lib/http.ts';

const work = path.resolve('.data', 'test-scratch', `cli-dev-bindings-${process.pid}`);
const dataDir = path.join(work, 'platform-data');
// no platform of the suite's own: `platform dev` starts one; the key below is never used
const { start } = cliFor({ url: 'http://127.0.0.1:9', key: 'ap_unused', work });

async function until<T>(fn: () => Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

test.before(async () => {
  await rm(work, { recursive: true, force: true });
});

test('platform dev gives a Workers project its KV namespace and queue', async () => {
  const dir = await writeProject(work, 'bound', {
    'wrangler.jsonc': JSON.stringify({
      name: 'bound',
      main: 'src/index.js',
      kv_namespaces: [{ binding: 'CACHE', id: 'local' }],
      queues: {
        producers: [{ binding: 'JOBS', queue: 'jobs' }],
        consumers: [{ queue: 'jobs', max_batch_timeout: 1 }],
      },
    }),
    'src/index.js': `export default {
  async fetch(request, env) {
    const u = new URL(request.url);
    if (u.pathname === '/put') { await env.CACHE.put('note', u.searchParams.get('v')); await env.JOBS.send({ v: u.searchParams.get('v') }); return new Response('stored'); }
    return Response.json({ note: await env.CACHE.get('note'), consumed: await env.CACHE.get('consumed') });
  },
  async queue(batch, env) {
    for (const m of batch.messages) await env.CACHE.put('consumed', m.body.v);
  },
};`,
  });
  const run = start(['dev', dir, '--data-dir', dataDir, '--port', '0']);
  try {
    const m = await run.waitForOutput(/http:\/\/([a-z0-9]+)\.apps\.localhost:(\d+)/, 90_000);
    const host = `${m[1]}.apps.localhost`;
    const port = Number(m[2]);
    assert.is((await request(port, 'GET', '/put?v=local', { host })).text, 'stored');
    const seen = await until(async () => {
      const r = JSON.parse((await request(port, 'GET', '/', { host })).text);
      return r.consumed === 'local' ? r : undefined;
    });
    assert.equal(seen, { note: 'local', consumed: 'local' });
  } finally {
    run.child.kill('SIGINT');
    const code = await Promise.race([
      run.exited,
      new Promise((r) => setTimeout(() => r('hung'), 20_000).unref()),
    ]);
    assert.is(code, 0, `exit after SIGINT: ${run.out.stderr}`);
  }
});

test.after(async () => {
  await rm(work, { recursive: true, force: true });
});

test.run();

/**
 * `platform kv`, `platform r2` and `platform queues` from a Workers project's folder: what the app
 * stored is listed, read, written and deleted from the terminal, as `wrangler kv key` and
 * `wrangler r2 object` do it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `bindings-cli-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });

test('kv, r2 and queues commands on what the app stored', async () => {
  const dir = await writeProject(work, 'stored', {
    'wrangler.jsonc': JSON.stringify({
      name: 'stored',
      main: 'src/index.js',
      kv_namespaces: [{ binding: 'CACHE', id: 'x' }],
      r2_buckets: [{ binding: 'MEDIA', bucket_name: 'media' }],
      queues: { producers: [{ binding: 'Q', queue: 'work' }] },
    }),
    'src/index.js': `export default { async fetch(req, env) {
      if (new URL(req.url).pathname === '/seed') {
        await env.CACHE.put('user/1', 'Ada');
        await env.MEDIA.put('photos/cat.txt', 'meow', { httpMetadata: { contentType: 'text/plain' } });
        await env.Q.send({ n: 1 });
        return new Response('seeded');
      }
      return new Response(await env.CACHE.get('note') ?? 'no note');
    } }`,
  });
  const pub = await cli(['publish'], { cwd: dir });
  assert.is(pub.code, 0, pub.stdout + pub.stderr);
  const host = `${await linkedApp(dir)}.apps.localhost`;
  assert.is((await h.call('GET', '/seed', { host })).text, 'seeded');
  const run = async (args: string[]) => {
    const r = await cli(args, { cwd: dir });
    assert.is(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r.stdout;
  };
  assert.match(await run(['kv', 'list', 'CACHE']), 'user/1');
  assert.is(await run(['kv', 'get', 'CACHE', 'user/1']), 'Ada');
  assert.match(
    await run(['kv', 'put', 'CACHE', 'note', 'from the terminal']),
    'written note in CACHE',
  );
  assert.is((await h.call('GET', '/', { host })).text, 'from the terminal', 'the app reads it');
  assert.match(await run(['kv', 'delete', 'CACHE', 'note']), 'deleted note');
  assert.is((await h.call('GET', '/', { host })).text, 'no note');
  const missing = await cli(['kv', 'get', 'CACHE', 'note'], { cwd: dir });
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /not found/i);
  const folders = await run(['r2', 'list', 'media']);
  assert.match(folders, 'photos/');
  assert.match(await run(['r2', 'list', 'media', '--prefix', 'photos/']), 'photos/cat.txt');
  assert.is(await run(['r2', 'get', 'media', 'photos/cat.txt']), 'meow', 'to stdout, as it is');
  const saved = path.join(dir, 'cat.txt');
  assert.match(await run(['r2', 'get', 'media', 'photos/cat.txt', '--file', saved]), '');
  assert.is(await readFile(saved, 'utf8'), 'meow');
  const none = await cli(['r2', 'get', 'media', 'photos/none.txt'], { cwd: dir });
  assert.is(none.code, 1);
  assert.match(none.stderr, /not found|no such|Object/i);
  assert.match(await run(['kv', 'list', 'CACHE', '--search', 'Ada']), 'user/1');
  assert.match(await run(['r2', 'delete', 'media', 'photos/cat.txt']), 'deleted photos/cat.txt');
  const overview = await run(['queues', 'list']);
  assert.match(overview, /work\s+1\s+0\s+0\s+0\s+no: messages wait/);
  assert.match(await run(['queues', 'purge', 'work']), 'purged 1 waiting messages from work');
});

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();

/**
 * An app's first request on a node that has nothing of it cached (a node just started, or the first
 * request after a change): one statement reads the pointer with the live release, its files and
 * compressed variants, its secrets and its server modules' bytes, and the answer is the one the
 * separate reads gave. Node B here is a second server on the same database, with its own caches.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { brotliDecompressSync } from 'node:zlib';
import { createDb, createPool } from '../../src/db/database.ts';
import type { Deps } from '../../src/deps.ts';
import { createLogger } from '../../src/logger.ts';
import { createServer } from '../../src/server.ts';
import { createSignals } from '../../src/signals.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const a = await createHarness({ PLATFORM_PLANS_FILE: '' });
const poolB = createPool(a.config.databaseUrl!, 5);
/** Every SQL text node B sends, in order. */
const sent: string[] = [];
poolB.on('connect', (client) => {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (
    ...args: unknown[]
  ) => {
    const q = args[0] as string | { text?: string };
    sent.push(typeof q === 'string' ? q : (q?.text ?? ''));
    return query(...args);
  };
});
const depsB: Deps = {
  ...a.deps,
  pool: poolB,
  db: createDb(poolB),
  signals: createSignals(),
  log: createLogger('silent'),
};
const nodeB = createServer(depsB);

const CSS = `body { color: black; }\n`.repeat(400);
const server = (n: number) => `import { shape } from './lib/shape';
import { util } from './lib/util.mjs';
export default { fetch(req, ctx) { return new Response('v${n} ' + (ctx.secrets.get('WORD') ?? '-') + ' ' + shape + ' ' + util); } };`;
const bundle = (n: number) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', '<h1>hi</h1>'),
      file('public/style.css', CSS, 'text/css'),
      file('server.js', server(n), 'text/javascript'),
      // a module named without an extension is still one by its content type
      file('lib/shape', `export const shape = 'round';`, 'text/javascript'),
      file('lib/util.mjs', `export const util = 'handy';`, 'text/javascript'),
    ],
  });

/** Statements of the separate reads a first request made before (release, files, variants, secrets, blob bytes). */
const separateReads = (texts: string[]) =>
  texts.filter((t) => /from "(releases|release_files|blob_variants|app_secrets|blobs)"/.test(t));

test("an app's first request on a fresh node: one statement brings its release, modules and secrets; the answer is the same", async () => {
  const u = await newUser(a);
  const appId = (await a.call('PUT', '/v0/apps', { key: u.api_key, body: bundle(1) })).body
    .app_id as string;
  assert.is(
    (
      await a.call('PUT', `/v0/apps/${appId}/secrets/WORD`, {
        key: u.api_key,
        body: { value: 'bird' },
      })
    ).status,
    200,
  );
  const host = `${appId}.apps.localhost`;
  // Node B's change feed is started (as its first request would) and connected first: connecting
  // forgets every cached pointer and secret, which could otherwise land between this request's reads
  // (seen once in a full, loaded run) and make it read the secrets again.
  await nodeB.runtime.feed.start();

  sent.length = 0;
  const first = await nodeB.request(`http://${host}/api`);
  assert.is(first.status, 200);
  assert.is(await first.text(), 'v1 bird round handy');
  assert.equal(
    separateReads(sent),
    [],
    `no separate read on the first request:\n${sent.join('\n')}`,
  );

  // its files' compressed forms came with it: the stylesheet goes out as brotli
  const css = await nodeB.request(`http://${host}/style.css`, {
    headers: { 'accept-encoding': 'br' },
  });
  assert.is(css.headers.get('content-encoding'), 'br');
  assert.is(brotliDecompressSync(Buffer.from(await css.arrayBuffer())).toString(), CSS);

  // a new release, published on node A, is read the same way on node B's next request
  assert.is(
    (await a.call('PUT', `/v0/apps/${appId}`, { key: u.api_key, body: bundle(2) })).status,
    200,
  );
  let text = '';
  for (let i = 0; i < 200 && !text.startsWith('v2'); i++) {
    sent.length = 0;
    text = await (await nodeB.request(`http://${host}/api`)).text();
    if (!text.startsWith('v2')) await new Promise((r) => setTimeout(r, 10));
  }
  assert.is(text, 'v2 bird round handy');
  assert.equal(separateReads(sent), [], `no separate read after the change:\n${sent.join('\n')}`);
});

test('a static app, an app without server code and an unknown app on first sight', async () => {
  const u = await newUser(a);
  const appId = (await a.call('PUT', '/v0/apps', { key: u.api_key, body: site() })).body
    .app_id as string;
  const page = await nodeB.request(`http://${appId}.apps.localhost/`);
  assert.is(page.status, 200);
  assert.is(await page.text(), '<h1>Hello</h1>');
  const script = await nodeB.request(`http://${appId}.apps.localhost/app.js`);
  assert.is(await script.text(), 'console.log(1)', 'a static script is served as a file');
  const unknown = await nodeB.request('http://nosuchapp00000.apps.localhost/');
  assert.is(unknown.status, 404);
  assert.is((await unknown.json()).error.code, 'not_found');
});

test.after(async () => {
  await nodeB.close();
  await depsB.db.destroy();
  await a.close();
});
test.run();

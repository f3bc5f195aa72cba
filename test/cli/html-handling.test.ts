/**
 * Workers' `html_handling`, each of its four modes: a Workers project with only static assets
 * (`file.html`, `folder/index.html`, `index.html`, a file without an extension) published
 * unchanged, and every path of Cloudflare's table (and a few more: the root, a query string, a
 * name with a space) answered as Miniflare's asset worker answers it: status, Location, body.
 */
import path from 'node:path';
import { Miniflare } from 'miniflare';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `html-handling-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });

const FILES = {
  'dist/index.html': 'root',
  'dist/file.html': 'file',
  'dist/folder/index.html': 'folder',
  'dist/my page.html': 'spaced',
  'dist/bin': 'bin',
};
const PATHS = [
  '/',
  '/index',
  '/index.html',
  '/file',
  '/file.html',
  '/file/',
  '/file/index',
  '/file/index.html',
  '/folder',
  '/folder.html',
  '/folder/',
  '/folder/index',
  '/folder/index.html',
  '/folder?x=1',
  '/file.html?x=1',
  '/my%20page',
  '/my%20page.html',
  '/bin',
  '/missing',
];
const MODES = [
  'auto-trailing-slash',
  'force-trailing-slash',
  'drop-trailing-slash',
  'none',
] as const;

/** What a visitor sees: the status, where a redirect goes (its path), the body of a page. */
async function seen(res: Response) {
  const location = res.headers.get('location');
  const body = res.status === 200 ? await res.text() : (await res.arrayBuffer(), null);
  return {
    status: res.status,
    location:
      location && new URL(location, 'http://x').pathname + new URL(location, 'http://x').search,
    body,
  };
}

for (const mode of MODES)
  test(`html_handling ${mode}: every path answers as Workers' asset worker`, async () => {
    const dir = await writeProject(work, mode, {
      ...FILES,
      'wrangler.jsonc': JSON.stringify({
        name: `pages-${mode}`,
        compatibility_date: '2025-04-01',
        assets: { directory: 'dist', html_handling: mode },
      }),
    });
    const r = await cli(['publish'], { cwd: dir });
    assert.is(r.code, 0, r.stdout + r.stderr);
    const host = `${await linkedApp(dir)}.apps.localhost`;
    const mf = new Miniflare({
      modules: true,
      script: 'export default {}',
      compatibilityDate: '2025-04-01',
      assets: {
        directory: path.join(dir, 'dist'),
        routerConfig: { has_user_worker: false },
        assetConfig: { html_handling: mode, not_found_handling: 'none' },
      },
    } as never);
    try {
      const differ: string[] = [];
      for (const p of PATHS) {
        const theirs = await seen(
          (await mf.dispatchFetch(`http://localhost${p}`, {
            redirect: 'manual',
          })) as unknown as Response,
        );
        const mine = await seen(
          await h.server.request(`http://${host}${p}`, { redirect: 'manual' }),
        );
        // a missing page: Workers answer a bare 404, the platform its own 404 body (both 404)
        if (JSON.stringify(mine) !== JSON.stringify(theirs))
          differ.push(`${p}: mine ${JSON.stringify(mine)} theirs ${JSON.stringify(theirs)}`);
      }
      assert.equal(differ, []);
    } finally {
      await mf.dispose();
    }
  });

test.after(async () => {
  await live.close();
  await h.close();
});
test.run();

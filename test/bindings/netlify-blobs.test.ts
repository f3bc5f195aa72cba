/**
 * Netlify Blobs: a Netlify site whose function uses `getStore` from `@netlify/blobs`
 * (test/fixtures/bindings/netlify-blobs-app) is published unchanged and answers every probe as the
 * same function does against @netlify/blobs' own local server (the package's BlobsServer, what
 * `netlify dev` runs), called in this process with the package itself.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BlobsServer } from '@netlify/blobs/server';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, linkedApp, linkPackages } from '../_lib/cli.ts';
import { assertSameAnswers } from '../_lib/same-answers.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `netlify-blobs-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const FIXTURE = path.resolve('test/fixtures/bindings/netlify-blobs-app');
const PROBES = ['basics', 'conditional', 'list'];

test('the Netlify Blobs function publishes unchanged and answers as against the local store', async () => {
  const dir = path.join(work, 'netlify-blobs-app');
  await cp(FIXTURE, dir, { recursive: true });
  await linkPackages(dir, ['@netlify/blobs']);
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await linkedApp(dir);
  // the control: the function itself, with the real package, against the package's local server
  const store = await mkdtemp(path.join(tmpdir(), 'netlify-blobs-'));
  const server = new BlobsServer({ directory: store, token: 'local-token', port: 0 });
  const { port } = await server.start();
  process.env.NETLIFY_BLOBS_CONTEXT = Buffer.from(
    JSON.stringify({
      edgeURL: `http://127.0.0.1:${port}`,
      uncachedEdgeURL: `http://127.0.0.1:${port}`,
      token: 'local-token',
      siteID: 'probe-site',
    }),
  ).toString('base64');
  const fn = (await import(pathToFileURL(path.join(dir, 'netlify/functions/probe.mjs')).href))
    .default as (req: Request) => Promise<Response>;
  try {
    for (const p of PROBES) {
      const theirs = (await (await fn(new Request(`http://localhost/${p}`))).json()) as Record<
        string,
        unknown
      >;
      const mine = await h.call('GET', `/.netlify/functions/${p}`, {
        host: `${appId}.apps.localhost`,
      });
      assert.is(mine.status, 200, `${p}: ${mine.text}`);
      assertSameAnswers(p, mine.body, theirs);
    }
  } finally {
    delete process.env.NETLIFY_BLOBS_CONTEXT;
    await server.stop();
    await rm(store, { recursive: true, force: true });
  }
});

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();

/**
 * An R2 app no one here wrote: R2-Explorer (the npm package `r2-explorer`, pinned as a
 * devDependency), set up as its documentation's manual template does (`export default
 * R2Explorer({ readonly: false })`, its dashboard as the Worker's assets, one R2 bucket), published
 * unchanged. Its API (list, upload, folders, head, get, metadata, move, copy, multipart, delete) is
 * driven as its dashboard drives it, and every answer compared with the same build under
 * Miniflare; moment-dependent members (versions, upload times, upload ids) by their presence.
 */
import { cp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { bundleModule } from '../_lib/esbuild.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';
import { startMiniflare } from '../_lib/miniflare.ts';
import { assertSameAnswers } from '../_lib/same-answers.ts';
import { eventsOf } from '../_lib/apps.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `r2-explorer-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });

const ENTRY = `import { R2Explorer } from 'r2-explorer';\n\nexport default R2Explorer({ readonly: false });\n`;
// the template's wrangler.toml, less the D1 database a later version's session sign-in needs
const WRANGLER = `name = "r2-explorer"
compatibility_date = "2024-11-06"
main = "src/index.ts"
assets = { directory = "node_modules/r2-explorer/dashboard", binding = "ASSETS", html_handling = "auto-trailing-slash", not_found_handling = "single-page-application" }

[[r2_buckets]]
binding = "BUCKET"
bucket_name = "bucket"
`;

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const VOLATILE = new Set(['version', 'uploaded', 'uploadId']);
/** An answer with what differs by the moment (versions, times, upload ids) replaced by its kind. */
function steady(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(steady);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, VOLATILE.has(k) ? typeof x : steady(x)]),
    );
  return v;
}

/** A step's path or body may be made when it runs (from the upload id and etags earlier steps got). */
type Step = {
  label: string;
  path: string | (() => string);
  init?: Omit<RequestInit, 'body'> & { body?: string | (() => string) };
};
const BIG = 'x'.repeat(5 * 1024 * 1024);
// as the dashboard calls the API: keys and prefixes base64, bodies raw
const STEPS = (uploadId: () => string, etags: () => string[]): Step[] => [
  { label: 'config', path: '/api/server/config' },
  {
    label: 'upload',
    path: `/api/buckets/BUCKET/upload?key=${b64('docs/héllo.txt')}&httpMetadata=${b64(JSON.stringify({ contentType: 'text/plain' }))}&customMetadata=${b64(JSON.stringify({ by: 'test' }))}`,
    init: { method: 'POST', body: 'hello, world' },
  },
  {
    label: 'folder',
    path: '/api/buckets/BUCKET/folder',
    init: {
      method: 'POST',
      body: JSON.stringify({ key: b64('photos/') }),
      headers: { 'content-type': 'application/json' },
    },
  },
  {
    label: 'list top',
    path: '/api/buckets/BUCKET?delimiter=/&include=httpMetadata&include=customMetadata',
  },
  { label: 'list docs', path: `/api/buckets/BUCKET?prefix=${b64('docs/')}&delimiter=/` },
  { label: 'head', path: `/api/buckets/BUCKET/${encodeURIComponent(b64('docs/héllo.txt'))}/head` },
  { label: 'get', path: `/api/buckets/BUCKET/${encodeURIComponent(b64('docs/héllo.txt'))}` },
  {
    label: 'metadata',
    path: `/api/buckets/BUCKET/${encodeURIComponent(b64('docs/héllo.txt'))}`,
    init: {
      method: 'POST',
      body: JSON.stringify({
        customMetadata: { by: 'edited' },
        httpMetadata: { contentType: 'text/markdown' },
      }),
      headers: { 'content-type': 'application/json' },
    },
  },
  {
    label: 'copy',
    path: '/api/buckets/BUCKET/copy',
    init: {
      method: 'POST',
      body: JSON.stringify({
        sourceKey: b64('docs/héllo.txt'),
        destinationKey: b64('docs/copy.txt'),
      }),
      headers: { 'content-type': 'application/json' },
    },
  },
  {
    label: 'move',
    path: '/api/buckets/BUCKET/move',
    init: {
      method: 'POST',
      body: JSON.stringify({ oldKey: b64('docs/copy.txt'), newKey: b64('archive/copy.txt') }),
      headers: { 'content-type': 'application/json' },
    },
  },
  {
    label: 'multipart create',
    path: `/api/buckets/BUCKET/multipart/create?key=${b64('big.bin')}`,
    init: { method: 'POST' },
  },
  {
    label: 'part 1',
    path: () =>
      `/api/buckets/BUCKET/multipart/upload?key=${b64('big.bin')}&uploadId=${encodeURIComponent(uploadId())}&partNumber=1`,
    init: { method: 'POST', body: BIG },
  },
  {
    label: 'part 2',
    path: () =>
      `/api/buckets/BUCKET/multipart/upload?key=${b64('big.bin')}&uploadId=${encodeURIComponent(uploadId())}&partNumber=2`,
    init: { method: 'POST', body: 'tail' },
  },
  {
    label: 'multipart complete',
    path: '/api/buckets/BUCKET/multipart/complete',
    init: {
      method: 'POST',
      body: () =>
        JSON.stringify({
          key: b64('big.bin'),
          uploadId: uploadId(),
          parts: etags().map((etag, i) => ({ etag, partNumber: i + 1 })),
        }),
      headers: { 'content-type': 'application/json' },
    },
  },
  { label: 'head big', path: `/api/buckets/BUCKET/${encodeURIComponent(b64('big.bin'))}/head` },
  {
    label: 'delete',
    path: '/api/buckets/BUCKET/delete',
    init: {
      method: 'POST',
      body: JSON.stringify({ key: b64('archive/copy.txt') }),
      headers: { 'content-type': 'application/json' },
    },
  },
  { label: 'list all', path: '/api/buckets/BUCKET' },
  { label: 'missing', path: `/api/buckets/BUCKET/${encodeURIComponent(b64('nope.txt'))}` },
];

/** Runs the steps against one host, keeping what later steps need (the upload id, the parts' etags). */
async function drive(fetchOf: (p: string, init?: RequestInit) => Promise<Response>) {
  let upload = '';
  const etags: string[] = [];
  const answers: { label: string; status: number; type: string | null; body: unknown }[] = [];
  for (const s of STEPS(
    () => upload,
    () => etags,
  )) {
    const p = typeof s.path === 'function' ? s.path() : s.path;
    const sent = typeof s.init?.body === 'function' ? s.init.body() : s.init?.body;
    // a browser's upload has a length (Workers' R2 refuses a stream without one)
    const init = s.init && {
      ...s.init,
      body: sent,
      headers: {
        ...(s.init.headers as Record<string, string>),
        ...(typeof sent === 'string' ? { 'content-length': String(Buffer.byteLength(sent)) } : {}),
      },
    };
    const res = await fetchOf(p, init).catch((e) => {
      throw new Error(`${s.label}: ${e?.cause ?? e}`);
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    if (s.label === 'multipart create') upload = (body as { uploadId: string }).uploadId;
    if (s.label.startsWith('part ')) {
      // a part's etag is opaque on R2 (Miniflare makes a random one): kept, compared by its kind
      etags.push((body as { etag: string }).etag);
      body = { ...(body as object), etag: typeof (body as { etag: unknown }).etag };
    }
    answers.push({
      label: s.label,
      status: res.status,
      type: res.headers.get('content-type'),
      body: steady(body),
    });
  }
  return answers;
}

test("R2-Explorer's documented project publishes unchanged and answers as under Miniflare", async () => {
  const dir = await writeProject(work, 'r2-explorer', {
    'wrangler.toml': WRANGLER,
    'src/index.ts': ENTRY,
    'package.json': JSON.stringify({
      name: 'r2-explorer-app',
      private: true,
      dependencies: { 'r2-explorer': '1.2.0' },
    }),
  });
  // the package as `npm install` puts it in the project (its own dependencies resolve from ours)
  await cp(path.resolve('node_modules/r2-explorer'), path.join(dir, 'node_modules/r2-explorer'), {
    recursive: true,
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /R2 bucket bucket: kept by the platform/);
  if (process.env.TEST_VERBOSE) console.log(r.stderr);
  const appId = await linkedApp(dir);
  const host = `${appId}.apps.localhost`;
  // the dashboard is the Worker's assets: its page, and an app route of the single-page app
  const page = await h.call('GET', '/', { host });
  if (page.status !== 200) {
    const errors = await eventsOf(h, u.api_key, appId, 'runtime.request_error');
    assert.unreachable(`${page.status}: ${JSON.stringify(errors[0]?.metadata)}`);
  }
  assert.match(page.text, /<div id="q-app">|<html/i);

  const bundled = path.join(work, 'r2-explorer.bundle.js');
  await writeFile(bundled, await bundleModule(ENTRY));
  const control = await startMiniflare(bundled, { r2Buckets: ['BUCKET'] });
  try {
    const theirs = await drive((p, init) => control.fetch(p, init));
    const mine = await drive(async (p, init) =>
      h.server.request(`http://${host}${p}`, init as RequestInit),
    );
    for (let i = 0; i < theirs.length; i++) assertSameAnswers(theirs[i]!.label, mine[i], theirs[i]);
  } finally {
    await control.stop();
  }
});

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();

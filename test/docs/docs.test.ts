/** The docs host: the reference lists every route; the manifest schema holds real manifests; the guides render. */
import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const DOCS = h.config.hosts.docs;
const doc = (await h.call('GET', '/openapi.json')).body;

test('the reference lists every /v0 operation with its statuses and codes', async () => {
  const r = await h.call('GET', '/reference', { host: DOCS });
  assert.is(r.status, 200);
  assert.match(r.headers.get('content-security-policy')!, "script-src 'none'");
  for (const [path, ops] of Object.entries<Record<string, { operationId: string }>>(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      assert.match(r.text, `id="${op.operationId}"`, `${method} ${path} has a section`);
      assert.match(r.text, `<code>${path}</code>`, `${path} is shown`);
    }
  }
  assert.match(r.text, 'id="schema-AppSummary"');
  assert.match(r.text, '<code>bundle_too_large</code>');
  assert.match(r.text, 'API key (Authorization: Bearer ap_…)');
  assert.match(r.text, 'console session cookie + X-Platform-CSRF');
  assert.not.match(r.text, /<(script|link)[^>]+https?:\/\//, 'nothing from another origin');
});

test('the guides render, each linked from every page', async () => {
  const home = await h.call('GET', '/', { host: DOCS });
  const slugs = [...home.text.matchAll(/href="\/guides\/([a-z0-9-]+)"/g)].map((m) => m[1]!);
  assert.ok(slugs.length >= 9, `guides: ${slugs.join(', ')}`);
  for (const slug of [
    'quick-start',
    'manifest',
    'server-code',
    'jobs',
    'webhooks',
    'data',
    'files',
    'app-users',
    'self-hosting',
  ]) {
    assert.ok(slugs.includes(slug), slug);
    const g = await h.call('GET', `/guides/${slug}`, { host: DOCS });
    assert.is(g.status, 200, slug);
    assert.match(g.text, /<h1[^>]*>/);
    assert.match(g.text, 'href="/guides/quick-start"');
  }
  assert.is((await h.call('GET', '/guides/nope', { host: DOCS })).status, 404);
});

test('the manifest JSON Schema accepts real manifests and refuses bad ones', async () => {
  const r = await h.call('GET', '/schemas/manifest.v0.json', { host: DOCS });
  assert.is(r.status, 200);
  assert.is(r.body.$id, 'http://docs.localhost:8787/schemas/manifest.v0.json');
  const onApi = await h.call('GET', '/schemas/manifest.v0.json');
  assert.is(onApi.body.$id, 'http://api.localhost:8787/schemas/manifest.v0.json');
  const ajv = new Ajv2020({ strict: false });
  (ajvFormats as unknown as (a: Ajv2020) => void)(ajv);
  const validate = ajv.compile(r.body);

  const guide = await readFile('docs/guides/02-manifest.md', 'utf8');
  const fromGuide = JSON.parse(/```json\n([\s\S]+?)\n```/.exec(guide)![1]!);
  const good = [
    {
      $schema: 'http://api.localhost:8787/schemas/manifest.v0.json',
      app: { name: 'site', summary: 'A new app' },
      runtime: { static_root: 'public', fallback: '404' },
    },
    fromGuide,
    {
      app: { name: 'x' },
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      resources: {
        jobs: { a: {}, b: { trigger: 'schedule', schedule: 'every_15_minutes', max_attempts: 10 } },
      },
    },
  ];
  for (const m of good) assert.ok(validate(m), JSON.stringify(validate.errors?.[0]));
  // what the schema accepts, the server accepts too
  const u = await newUser(h);
  const { $schema: _s, ...body } = fromGuide;
  const published = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: {
      ...body,
      files: [
        { path: 'public/index.html', content_type: 'text/html', content_base64: 'aGk=' },
        {
          path: 'server.js',
          content_type: 'text/javascript',
          content_base64: Buffer.from('export default {}').toString('base64'),
        },
      ],
    },
  });
  assert.is(published.status, 200, published.text);

  const bad: [string, unknown][] = [
    ['an unknown member', { app: { name: 'x' }, runtime: { static_root: 'p' }, extra: 1 }],
    ['no runtime', { app: { name: 'x' } }],
    [
      'a fallback that does not exist',
      { app: { name: 'x' }, runtime: { static_root: 'p', fallback: 'spa' } },
    ],
    [
      'a weekly schedule',
      {
        app: { name: 'x' },
        runtime: { static_root: 'p' },
        resources: { jobs: { j: { trigger: 'schedule', schedule: 'weekly' } } },
      },
    ],
    ['an empty name', { app: { name: '' }, runtime: { static_root: 'p' } }],
    ['an absolute path', { app: { name: 'x' }, runtime: { static_root: '/public' } }],
    [
      'a field type that does not exist',
      {
        app: { name: 'x' },
        runtime: { static_root: 'p' },
        resources: { data: { collections: { c: { fields: { f: 'text' } } } } },
      },
    ],
  ];
  for (const [label, m] of bad) assert.not.ok(validate(m), label);
});

test.after(() => h.close());
test.run();

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site, withResources } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const MiB = 1024 * 1024;

const col = (fields: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  data: { collections: { notes: { fields, ...extra } } },
});

/** [name, body, status, code, a field that details must name] */
const CASES: [string, unknown, number, string, string?][] = [
  ['not an object', [1, 2], 400, 'invalid_request'],
  ['unknown top-level property', site({ extra: 1 }), 400, 'invalid_request', 'extra'],
  [
    'missing app',
    { runtime: { static_root: 'public' }, files: site().files },
    400,
    'invalid_request',
    'app',
  ],
  ['empty app name', site({ app: { name: '' } }), 400, 'invalid_request', 'app.name'],
  [
    'app name of 121 characters',
    site({ app: { name: 'x'.repeat(121) } }),
    400,
    'invalid_request',
    'app.name',
  ],
  [
    'unknown app property',
    site({ app: { name: 'a', owner: 'me' } }),
    400,
    'invalid_request',
    'app.owner',
  ],
  [
    'bad visibility',
    site({ app: { name: 'a', visibility: 'secret' } }),
    400,
    'invalid_request',
    'app.visibility',
  ],
  ['bad tag', site({ app: { name: 'a', tags: ['Nope'] } }), 400, 'invalid_request', 'app.tags.0'],
  [
    'reserved tag',
    site({ app: { name: 'a', tags: ['system'] } }),
    400,
    'invalid_request',
    'app.tags.0',
  ],
  [
    'bad fallback',
    site({ runtime: { static_root: 'public', fallback: 'spa' } }),
    400,
    'invalid_request',
    'runtime.fallback',
  ],
  [
    'unknown runtime property',
    site({ runtime: { static_root: 'public', node: 20 } }),
    400,
    'invalid_request',
    'runtime.node',
  ],
  ['no files', site({ files: [] }), 400, 'invalid_bundle', 'files'],
  ['files not an array', site({ files: {} }), 400, 'invalid_bundle', 'files'],
  [
    'file without content',
    site({ files: [{ path: 'public/a', content_type: 'text/plain' }] }),
    400,
    'invalid_bundle',
    'files.0.content_base64',
  ],
  [
    'invalid base64',
    site({ files: [{ path: 'public/a', content_type: 'text/plain', content_base64: 'abc$' }] }),
    400,
    'invalid_bundle',
    'files.0.content_base64',
  ],
  [
    'base64 with bad length',
    site({ files: [{ path: 'public/a', content_type: 'text/plain', content_base64: 'abcde' }] }),
    400,
    'invalid_bundle',
    'files.0.content_base64',
  ],
  [
    'base64url alphabet',
    site({ files: [{ path: 'public/a', content_type: 'text/plain', content_base64: 'ab-_' }] }),
    400,
    'invalid_bundle',
    'files.0.content_base64',
  ],
  [
    'duplicate paths',
    site({ files: [file('public/a', 'x'), file('public/a', 'y')] }),
    400,
    'invalid_bundle',
    'files.1.path',
  ],
  [
    'bad content type',
    site({ files: [file('public/a', 'x', 'html')] }),
    400,
    'invalid_bundle',
    'files.0.content_type',
  ],
  [
    'content type too long',
    site({ files: [file('public/a', 'x', `text/${'a'.repeat(251)}`)] }),
    400,
    'invalid_bundle',
    'files.0.content_type',
  ],
  ['absolute path', site({ files: [file('/public/a', 'x')] }), 400, 'invalid_path', 'files.0.path'],
  [
    'dot-dot path',
    site({ files: [file('public/../etc/passwd', 'x')] }),
    400,
    'invalid_path',
    'files.0.path',
  ],
  ['dot segment', site({ files: [file('public/./a', 'x')] }), 400, 'invalid_path', 'files.0.path'],
  ['empty segment', site({ files: [file('public//a', 'x')] }), 400, 'invalid_path', 'files.0.path'],
  ['backslash', site({ files: [file('public\\a', 'x')] }), 400, 'invalid_path', 'files.0.path'],
  [
    'reserved _platform',
    site({ files: [file('_platform/x', 'x'), file('public/a', 'x')] }),
    400,
    'invalid_path',
    'files.0.path',
  ],
  [
    'path of 513 characters',
    site({ files: [file(`public/${'a'.repeat(506)}`, 'x')] }),
    400,
    'invalid_path',
    'files.0.path',
  ],
  [
    'static_root with ..',
    site({ runtime: { static_root: '../public' } }),
    400,
    'invalid_path',
    'runtime.static_root',
  ],
  [
    'server_entry absolute',
    site({ runtime: { static_root: 'public', server_entry: '/server.js' } }),
    400,
    'invalid_path',
    'runtime.server_entry',
  ],
  [
    'static_root matches nothing',
    site({ runtime: { static_root: 'dist' } }),
    400,
    'missing_static_root',
    'runtime.static_root',
  ],
  [
    'static_root is only a prefix of a name',
    site({ runtime: { static_root: 'pub' } }),
    400,
    'missing_static_root',
    'runtime.static_root',
  ],
  [
    'server fallback without entry',
    site({ runtime: { static_root: 'public', fallback: 'server' } }),
    400,
    'missing_server_entry',
    'runtime.server_entry',
  ],
  [
    'server entry not a file',
    site({ runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' } }),
    400,
    'missing_server_entry',
    'runtime.server_entry',
  ],
  [
    'unknown resources member',
    withResources({ queues: {} }),
    400,
    'invalid_resource_manifest',
    'resources.queues',
  ],
  [
    'reserved collection name',
    withResources({ data: { collections: { auth: { fields: {} } } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'collection name with capitals',
    withResources({ data: { collections: { Notes: { fields: {} } } } }),
    400,
    'invalid_resource_manifest',
  ],
  ['reserved field name', withResources(col({ id: 'string' })), 400, 'invalid_resource_manifest'],
  [
    'field name with hyphen',
    withResources(col({ 'my-field': 'string' })),
    400,
    'invalid_resource_manifest',
  ],
  [
    'unknown field type',
    withResources(col({ title: 'text' })),
    400,
    'invalid_resource_manifest',
    'resources.data.collections.notes.fields.title',
  ],
  [
    'enum without values',
    withResources(col({ state: { type: 'enum' } })),
    400,
    'invalid_resource_manifest',
  ],
  ['enum as plain string', withResources(col({ state: 'enum' })), 400, 'invalid_resource_manifest'],
  [
    'enum with repeated values',
    withResources(col({ state: { type: 'enum', values: ['a', 'a'] } })),
    400,
    'invalid_resource_manifest',
  ],
  [
    'enum with empty value',
    withResources(col({ state: { type: 'enum', values: [''] } })),
    400,
    'invalid_resource_manifest',
  ],
  [
    'extra member on a plain type',
    withResources(col({ title: { type: 'string', max: 5 } })),
    400,
    'invalid_resource_manifest',
  ],
  [
    'reference to undeclared collection',
    withResources(col({ owner: { type: 'reference', collection: 'people' } })),
    400,
    'invalid_resource_manifest',
    'resources.data.collections.notes.fields.owner.collection',
  ],
  [
    'index on undeclared field',
    withResources(col({ title: 'string' }, { indexes: [{ name: 'by_x', fields: ['x'] }] })),
    400,
    'invalid_resource_manifest',
    'resources.data.collections.notes.indexes.0.fields',
  ],
  [
    'index without fields',
    withResources(col({ title: 'string' }, { indexes: [{ name: 'by_x', fields: [] }] })),
    400,
    'invalid_resource_manifest',
  ],
  [
    'repeated index name',
    withResources(
      col(
        { title: 'string' },
        {
          indexes: [
            { name: 'i', fields: ['title'] },
            { name: 'i', fields: ['title'] },
          ],
        },
      ),
    ),
    400,
    'invalid_resource_manifest',
  ],
  [
    'bad access rule',
    withResources(col({ title: 'string' }, { access: { read: 'everyone' } })),
    400,
    'invalid_resource_manifest',
  ],
  [
    'owner access without app users',
    withResources(col({ title: 'string' }, { access: { read: 'owner' } })),
    400,
    'invalid_resource_manifest',
    'resources.data.collections.notes.access.read',
  ],
  [
    'undeclared role in access',
    withResources({
      auth: { mode: 'app_users', roles: ['editor'] },
      ...col({ t: 'string' }, { access: { write: 'role:admin' } }),
    }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'reserved role name',
    withResources({ auth: { mode: 'app_users', roles: ['platform'] } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'repeated roles',
    withResources({ auth: { mode: 'app_users', roles: ['a', 'a'] } }),
    400,
    'invalid_resource_manifest',
  ],
  ['bad auth mode', withResources({ auth: { mode: 'oauth' } }), 400, 'invalid_resource_manifest'],
  [
    'store size zero',
    withResources({ files: { stores: { up: { max_file_size_bytes: 0 } } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'store bad content type',
    withResources({ files: { stores: { up: { allowed_content_types: ['images'] } } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'secret name lowercase',
    withResources({ secrets: { required: ['api_key'] } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'secret with platform prefix',
    withResources({ secrets: { required: ['PLATFORM_TOKEN'] } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'secret with provider prefix',
    withResources({ secrets: { required: ['AWS_KEY'] } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'secret name of 65 characters',
    withResources({ secrets: { required: ['A'.repeat(65)] } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'repeated secrets',
    withResources({ secrets: { required: ['A', 'A'] } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'max_attempts 11',
    withResources({ jobs: { sync: { max_attempts: 11 } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'max_attempts 0',
    withResources({ jobs: { sync: { max_attempts: 0 } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'schedule without trigger',
    withResources({ jobs: { sync: { schedule: 'hourly' } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'scheduled job without schedule',
    withResources({ jobs: { sync: { trigger: 'schedule' } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'unknown schedule',
    withResources({ jobs: { sync: { trigger: 'schedule', schedule: 'weekly' } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'signed webhook without secret',
    withResources({ webhooks: { gh: { provider: 'code_host' } } }),
    400,
    'invalid_resource_manifest',
    'resources.webhooks.gh.secret',
  ],
  [
    'webhook secret not required',
    withResources({ webhooks: { gh: { provider: 'generic_hmac', secret: 'HOOK_SECRET' } } }),
    400,
    'invalid_resource_manifest',
    'resources.webhooks.gh.secret',
  ],
  [
    'webhook to undeclared job',
    withResources({ webhooks: { gh: { deliver_to: 'job:sync' } } }),
    400,
    'invalid_resource_manifest',
    'resources.webhooks.gh.deliver_to',
  ],
  [
    'webhook deliver_to job without job',
    withResources({ webhooks: { gh: { deliver_to: 'job' } } }),
    400,
    'invalid_resource_manifest',
    'resources.webhooks.gh.job',
  ],
  [
    'webhook unknown provider',
    withResources({ webhooks: { gh: { provider: 'stripe' } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'webhook unknown property',
    withResources({ webhooks: { gh: { url: 'x' } } }),
    400,
    'invalid_resource_manifest',
  ],
  [
    'over 1000 files',
    site({ files: Array.from({ length: 1001 }, (_, i) => file(`public/f${i}`, '')) }),
    413,
    'bundle_too_large',
  ],
  [
    'a file over 20 MiB',
    site({
      files: [file('public/index.html', 'x'), file('public/big', Buffer.alloc(20 * MiB + 1))],
    }),
    413,
    'bundle_too_large',
  ],
  [
    'over 100 MiB in total',
    site({
      files: Array.from({ length: 6 }, (_, i) => file(`public/b${i}`, Buffer.alloc(18 * MiB, i))),
    }),
    413,
    'bundle_too_large',
  ],
];

test('every bad bundle is refused with its code and the offending field', async () => {
  for (const [name, body, status, code, field] of CASES) {
    const r = await h.call('PUT', '/v0/apps', { key: u.api_key, body });
    assert.is(r.status, status, `${name}: status (${r.text.slice(0, 300)})`);
    assert.is(r.body?.error?.code, code, `${name}: code (${r.text.slice(0, 300)})`);
    if (field)
      assert.ok(
        r.body.error.details?.fields?.[field],
        `${name}: details name ${field} (${JSON.stringify(r.body.error.details)})`,
      );
  }
});

test('valid edge cases are accepted', async () => {
  const ok = [
    site({ app: { name: 'x'.repeat(120), visibility: 'private', tags: ['a-b', 'c1'] } }),
    site({
      files: [
        file('public/empty.txt', '', 'text/plain'),
        file('public/q.txt', 'x', 'text/plain; charset="utf-8"; q=1'),
      ],
    }),
    site({ runtime: { static_root: 'public/index.html' } }),
    withResources({
      webhooks: {
        gh: { provider: 'code_host', secret: 'GH_SECRET', deliver_to: 'job', job: 'sync' },
      },
      jobs: { sync: {} },
      secrets: { required: ['GH_SECRET'] },
    }),
    withResources({
      webhooks: { hook: { deliver_to: 'job:sync' } },
      jobs: { sync: { trigger: 'schedule', schedule: 'daily', max_attempts: 10 } },
    }),
    withResources({
      auth: { mode: 'app_users', roles: ['editor'] },
      ...col(
        { t: 'string', s: { type: 'enum', values: ['a'] } },
        {
          access: { read: 'public', write: 'role:editor' },
          indexes: [{ name: 'by_t', fields: ['t'], unique: true }],
        },
      ),
    }),
  ];
  for (const body of ok) {
    const r = await h.call('PUT', '/v0/apps', { key: u.api_key, body });
    assert.is(r.status, 200, r.text);
  }
});

test('a rejected publish leaves no trace: no app, release, bytes or event', async () => {
  const fresh = await newUser(h);
  const existing = await h.call('PUT', '/v0/apps', { key: fresh.api_key, body: site() });
  const count = async () => ({
    apps: (
      await h.deps.db
        .selectFrom('apps')
        .select('id')
        .where('account_id', '=', fresh.account_id)
        .execute()
    ).length,
    releases: (
      await h.deps.db
        .selectFrom('releases')
        .select('id')
        .where('app_id', '=', existing.body.app_id)
        .execute()
    ).length,
    blobs: (
      await h.deps.db
        .selectFrom('blobs')
        .select('size')
        .where('account_id', '=', fresh.account_id)
        .execute()
    ).length,
    events: (
      await h.deps.db
        .selectFrom('app_events')
        .select('id')
        .where('account_id', '=', fresh.account_id)
        .execute()
    ).length,
  });
  const before = await count();
  for (const [name, body] of CASES) {
    const withNewBytes =
      body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as object) } : body;
    await h.call('PUT', '/v0/apps', { key: fresh.api_key, body: withNewBytes });
    await h.call('PUT', `/v0/apps/${existing.body.app_id}`, {
      key: fresh.api_key,
      body: withNewBytes,
    });
    assert.equal(await count(), before, name);
  }
  // A bundle whose bytes are new but whose manifest is invalid stores none of them.
  await h.call('PUT', `/v0/apps/${existing.body.app_id}`, {
    key: fresh.api_key,
    body: site({ files: [file('public/new', 'never stored')], runtime: { static_root: 'nope' } }),
  });
  assert.equal(await count(), before);
});

test('an oversized body is refused with 413 before it is read in full', async () => {
  const huge = 'x'.repeat(150 * MiB);
  const r = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    rawBody: huge,
    headers: { 'content-type': 'application/json' },
  });
  assert.is(r.status, 413);
  assert.is(r.body.error.code, 'bundle_too_large');
});

test('non-JSON and malformed JSON publishes are 400', async () => {
  const a = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    rawBody: '{"app":',
    headers: { 'content-type': 'application/json' },
  });
  assert.is(a.status, 400);
  assert.is(a.body.error.code, 'invalid_json');
  const b = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    rawBody: 'x',
    headers: { 'content-type': 'text/plain' },
  });
  assert.is(b.status, 400);
});

test.after(() => h.close());
test.run();

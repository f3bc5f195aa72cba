import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { withResources, site } from '../_lib/bundles.ts';
import type { ListedEvent } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;

async function events(appId: string, type?: string): Promise<ListedEvent[]> {
  return (
    await h.api('GET /v0/apps/{app_id}/events', { key, params: { app_id: appId }, query: { type } })
  ).events;
}

test('missing required secrets: stored as pending_secrets, pointer unchanged; set + republish goes live', async () => {
  const first = await h.call('PUT', '/v0/apps', { key, body: site() });
  const appId = first.body.app_id;
  const pending = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: withResources({ secrets: { required: ['STRIPE_KEY', 'API_TOKEN'] } }),
  });
  assert.is(pending.status, 200);
  assert.is(pending.body.status, 'stored');
  assert.is(pending.body.activation.status, 'pending_secrets');
  assert.equal(pending.body.activation.missing_secrets.sort(), ['API_TOKEN', 'STRIPE_KEY']);
  assert.is(pending.body.previous_release_id, first.body.release_id);
  assert.is(pending.body.activation.previous_release_id, first.body.release_id);
  assert.ok(pending.body.activation.reasons.length >= 1);
  let app = await h.call('GET', `/v0/apps/${appId}`, { key });
  assert.is(app.body.live_release_id, first.body.release_id);

  const secrets = await h.call('GET', `/v0/apps/${appId}/secrets`, { key });
  assert.equal(secrets.body.secrets, [
    { name: 'API_TOKEN', present: false },
    { name: 'STRIPE_KEY', present: false },
  ]);

  await h.call('PUT', `/v0/apps/${appId}/secrets/STRIPE_KEY`, {
    key,
    body: { value: 'sk_live_x' },
  });
  app = await h.call('GET', `/v0/apps/${appId}`, { key });
  assert.is(
    app.body.live_release_id,
    first.body.release_id,
    'setting a secret activates nothing by itself',
  );
  const still = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: withResources({ secrets: { required: ['STRIPE_KEY', 'API_TOKEN'] } }),
  });
  assert.equal(
    still.body.activation.missing_secrets,
    ['API_TOKEN'],
    'the response names what is still missing',
  );

  await h.call('PUT', `/v0/apps/${appId}/secrets/API_TOKEN`, { key, body: { value: 't' } });
  const live = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: withResources({ secrets: { required: ['STRIPE_KEY', 'API_TOKEN'] } }),
  });
  assert.is(live.body.status, 'published');
  assert.equal(live.body.activation, {
    status: 'live',
    reasons: [],
    missing_secrets: [],
    previous_release_id: first.body.release_id,
  });

  const rels = await h.api('GET /v0/apps/{app_id}/releases', { key, params: { app_id: appId } });
  const pendingRel = rels.releases.find((r) => r.release_id === pending.body.release_id);
  assert.is(pendingRel?.activation_status, 'pending_secrets');
  assert.equal(pendingRel?.activation_error?.missing_secrets?.sort(), ['API_TOKEN', 'STRIPE_KEY']);
  // A pending release was never live, so it cannot be rolled back to.
  const rb = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: pending.body.release_id },
  });
  assert.is(rb.status, 409);
});

const notes = (fields: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  data: { collections: { notes: { fields, ...extra } } },
});

/** [name, before, after, compatible] */
const CHANGES: [string, Record<string, unknown>, Record<string, unknown>, boolean][] = [
  ['field type changed', notes({ n: 'integer' }), notes({ n: 'string' }), false],
  [
    'enum narrowed',
    notes({ s: { type: 'enum', values: ['a', 'b'] } }),
    notes({ s: { type: 'enum', values: ['a'] } }),
    false,
  ],
  [
    'enum widened',
    notes({ s: { type: 'enum', values: ['a'] } }),
    notes({ s: { type: 'enum', values: ['a', 'b'] } }),
    true,
  ],
  [
    'reference retargeted',
    {
      data: {
        collections: {
          a: { fields: {} },
          b: { fields: {} },
          notes: { fields: { r: { type: 'reference', collection: 'a' } } },
        },
      },
    },
    {
      data: {
        collections: {
          a: { fields: {} },
          b: { fields: {} },
          notes: { fields: { r: { type: 'reference', collection: 'b' } } },
        },
      },
    },
    false,
  ],
  // checked against the rows (none here; rows that share a value: test/data/unique-again.test.ts)
  [
    'index made unique',
    notes({ t: 'string' }, { indexes: [{ name: 'by_t', fields: ['t'] }] }),
    notes({ t: 'string' }, { indexes: [{ name: 'by_t', fields: ['t'], unique: true }] }),
    true,
  ],
  [
    'unique index added to an existing collection',
    notes({ t: 'string' }),
    notes({ t: 'string' }, { indexes: [{ name: 'by_t', fields: ['t'], unique: true }] }),
    true,
  ],
  [
    'unique index relaxed',
    notes({ t: 'string' }, { indexes: [{ name: 'by_t', fields: ['t'], unique: true }] }),
    notes({ t: 'string' }, { indexes: [{ name: 'by_t', fields: ['t'] }] }),
    true,
  ],
  [
    'store public to private',
    { files: { stores: { up: { public: true } } } },
    { files: { stores: { up: { public: false } } } },
    false,
  ],
  [
    'store size limit changed',
    { files: { stores: { up: { max_file_size_bytes: 10 } } } },
    { files: { stores: { up: { max_file_size_bytes: 20 } } } },
    true,
  ],
  [
    'job trigger changed',
    { jobs: { sync: {} } },
    { jobs: { sync: { trigger: 'schedule', schedule: 'hourly' } } },
    false,
  ],
  [
    'job schedule changed',
    { jobs: { sync: { trigger: 'schedule', schedule: 'hourly' } } },
    { jobs: { sync: { trigger: 'schedule', schedule: 'daily' } } },
    true,
  ],
  ['app users turned off', { auth: { mode: 'app_users' } }, { auth: { mode: 'none' } }, false],
  [
    'role dropped',
    { auth: { mode: 'app_users', roles: ['a', 'b'] } },
    { auth: { mode: 'app_users', roles: ['a'] } },
    false,
  ],
  [
    'role added',
    { auth: { mode: 'app_users', roles: ['a'] } },
    { auth: { mode: 'app_users', roles: ['a', 'b'] } },
    true,
  ],
  ['field added', notes({ t: 'string' }), notes({ t: 'string', n: 'number' }), true],
  [
    'collection, store and job added',
    notes({ t: 'string' }),
    {
      ...notes({ t: 'string' }),
      data: { collections: { notes: { fields: { t: 'string' } }, tags: { fields: {} } } },
      files: { stores: { up: {} } },
      jobs: { j: {} },
    },
    true,
  ],
  [
    'access changed',
    notes({ t: 'string' }),
    notes({ t: 'string' }, { access: { read: 'public' } }),
    true,
  ],
];

test('incompatible resource changes are requires_migration; compatible ones go live', async () => {
  for (const [name, before, after, compatible] of CHANGES) {
    const a = await h.call('PUT', '/v0/apps', { key, body: withResources(before) });
    assert.is(a.body.status, 'published', `${name}: first publish (${a.text})`);
    const b = await h.call('PUT', `/v0/apps/${a.body.app_id}`, { key, body: withResources(after) });
    assert.is(b.status, 200, name);
    if (compatible) {
      assert.is(b.body.activation.status, 'live', `${name}: ${JSON.stringify(b.body.activation)}`);
    } else {
      assert.is(b.body.status, 'stored', name);
      assert.is(b.body.activation.status, 'requires_migration', name);
      assert.ok(b.body.activation.reasons.length > 0, name);
      const app = await h.call('GET', `/v0/apps/${a.body.app_id}`, { key });
      assert.is(app.body.live_release_id, a.body.release_id, `${name}: pointer unchanged`);
    }
  }
});

test('a field dropped and re-added with another type is still incompatible (monotonic)', async () => {
  const a = await h.call('PUT', '/v0/apps', {
    key,
    body: withResources(notes({ n: 'integer', t: 'string' })),
  });
  const b = await h.call('PUT', `/v0/apps/${a.body.app_id}`, {
    key,
    body: withResources(notes({ t: 'string' })),
  });
  assert.is(b.body.activation.status, 'live');
  const c = await h.call('PUT', `/v0/apps/${a.body.app_id}`, {
    key,
    body: withResources(notes({ t: 'string', n: 'boolean' })),
  });
  assert.is(c.body.activation.status, 'requires_migration');
});

test('provisioning records resource.provisioned; a resource left out records resource.omitted and stays provisioned', async () => {
  const a = await h.call('PUT', '/v0/apps', {
    key,
    body: withResources({ ...notes({ t: 'string' }), files: { stores: { up: {} } } }),
  });
  const prov = await events(a.body.app_id, 'resource.provisioned');
  assert.equal(prov.map((e) => `${e.metadata.resource_type}:${e.metadata.resource_name}`).sort(), [
    'data:notes',
    'files:up',
  ]);
  const res = await h.api('GET /v0/apps/{app_id}/resources', {
    key,
    params: { app_id: a.body.app_id },
  });
  assert.equal(res.resources.map((r) => `${r.resource_type}:${r.resource_name}`).sort(), [
    'data:notes',
    'files:up',
  ]);
  const notesState = res.resources.find((r) => r.resource_type === 'data');
  assert.equal(notesState?.spec, {
    fields: { t: { type: 'string' } },
    indexes: [],
    access: { read: 'server_only', write: 'server_only' },
  });

  const b = await h.call('PUT', `/v0/apps/${a.body.app_id}`, {
    key,
    body: withResources(notes({ t: 'string' })),
  });
  assert.is(b.body.status, 'published');
  const omitted = await events(a.body.app_id, 'resource.omitted');
  assert.is(omitted.length, 1);
  assert.equal(omitted[0]!.metadata, { resource_type: 'files', resource_name: 'up' });
  assert.is(omitted[0]!.release_id, b.body.release_id);
  // Unchanged resources are not provisioned again.
  assert.is((await events(a.body.app_id, 'resource.provisioned')).length, 2);
  // The store is still provisioned: making it public now is an incompatible redefinition.
  const c = await h.call('PUT', `/v0/apps/${a.body.app_id}`, {
    key,
    body: withResources({ files: { stores: { up: { public: true } } } }),
  });
  assert.is(c.body.activation.status, 'requires_migration');
  const res2 = await h.api('GET /v0/apps/{app_id}/resources', {
    key,
    params: { app_id: a.body.app_id },
  });
  assert.equal(
    res2.resources.map((r) => r.resource_name),
    ['notes'],
  );
});

test('publish events: release.created and release.activated carry release and key ids', async () => {
  const a = await h.call('PUT', '/v0/apps', { key, body: site() });
  const evs = await events(a.body.app_id);
  const types = evs.map((e) => e.type);
  assert.ok(types.includes('release.created'));
  assert.ok(types.includes('release.activated'));
  const created = evs.find((e) => e.type === 'release.created')!;
  assert.is(created.release_id, a.body.release_id);
  assert.match(created.api_key_id ?? '', /^key_/);
  assert.ok(created.request_id);
});

test('rollback: moves only the pointer to a retained live-before release; errors for the rest', async () => {
  const a = await h.call('PUT', '/v0/apps', { key, body: withResources(notes({ t: 'string' })) });
  const appId = a.body.app_id;
  const b = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: withResources(notes({ t: 'string', n: 'number' })),
  });
  await h.call('PUT', `/v0/apps/${appId}/secrets/KEEP_ME`, { key, body: { value: 'v' } });
  const rb = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: a.body.release_id },
  });
  assert.is(rb.status, 200, rb.text);
  assert.equal(rb.body, {
    app_id: appId,
    release_id: a.body.release_id,
    previous_release_id: b.body.release_id,
    origin: a.body.origin,
    status: 'rolled_back',
  });
  const app = await h.call('GET', `/v0/apps/${appId}`, { key });
  assert.is(app.body.live_release_id, a.body.release_id);
  const rels = await h.api('GET /v0/apps/{app_id}/releases', { key, params: { app_id: appId } });
  assert.equal(
    rels.releases.map((r) => [r.release_id, r.activation_status, r.is_live]),
    [
      [b.body.release_id, 'inactive', false],
      [a.body.release_id, 'live', true],
    ],
  );
  assert.is((await events(appId, 'release.rolled_back')).length, 1);
  const secrets = await h.api('GET /v0/apps/{app_id}/secrets', { key, params: { app_id: appId } });
  assert.ok(
    secrets.secrets.some((s) => s.name === 'KEEP_ME' && s.present),
    'secrets kept',
  );
  // Roll forward again works too.
  const fwd = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: b.body.release_id },
  });
  assert.is(fwd.status, 200);

  const already = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: b.body.release_id },
  });
  assert.is(already.status, 409);
  const unknown = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: 'rel_00000000000000000000' },
  });
  assert.is(unknown.status, 404);
  for (const bad of [
    {},
    { release_id: 'abc' },
    { release_id: 5 },
    { release_id: 'rel_x', extra: 1 },
  ]) {
    const r = await h.call('POST', `/v0/apps/${appId}/rollback`, { key, body: bad });
    assert.is(r.status, 400, JSON.stringify(bad));
  }
  const other = await h.call('PUT', '/v0/apps', { key, body: site() });
  const foreign = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: other.body.release_id },
  });
  assert.is(foreign.status, 404, "another app's release is not found");
});

test('rollback to a release incompatible with what was provisioned since is 409 requires_migration', async () => {
  const narrow = withResources(notes({ s: { type: 'enum', values: ['a', 'b'] } }));
  const wide = withResources(notes({ s: { type: 'enum', values: ['a', 'b', 'c'] } }));
  const a = await h.call('PUT', '/v0/apps', { key, body: narrow });
  const b = await h.call('PUT', `/v0/apps/${a.body.app_id}`, { key, body: wide });
  assert.is(b.body.status, 'published');
  // Rows may now hold "c": going back to a release without it would break them.
  const r = await h.call('POST', `/v0/apps/${a.body.app_id}/rollback`, {
    key,
    body: { release_id: a.body.release_id },
  });
  assert.is(r.status, 409);
  assert.is(r.body.error.code, 'requires_migration');
  assert.match(r.body.error.details.reasons.join(' '), '"c"');
  const app = await h.call('GET', `/v0/apps/${a.body.app_id}`, { key });
  assert.is(app.body.live_release_id, b.body.release_id);
});

test('rollback to a release whose required secret was deleted is 409 pending_secrets', async () => {
  const a = await h.call('PUT', '/v0/apps', { key, body: site() });
  await h.call('PUT', `/v0/apps/${a.body.app_id}/secrets/GONE`, { key, body: { value: 'x' } });
  const f = await h.call('PUT', `/v0/apps/${a.body.app_id}`, {
    key,
    body: withResources({ secrets: { required: ['GONE'] } }),
  });
  assert.is(f.body.status, 'published');
  await h.call('PUT', `/v0/apps/${a.body.app_id}`, { key, body: site() });
  await h.call('DELETE', `/v0/apps/${a.body.app_id}/secrets/GONE`, { key });
  const needsSecret = await h.call('POST', `/v0/apps/${a.body.app_id}/rollback`, {
    key,
    body: { release_id: f.body.release_id },
  });
  assert.is(needsSecret.status, 409);
  assert.is(needsSecret.body.error.code, 'pending_secrets');
  assert.equal(needsSecret.body.error.details.missing_secrets, ['GONE']);
});

test.after(() => h.close());
test.run();

/**
 * The bindings browser's API (what the console and `platform kv|r2|queues` use): an app's KV
 * namespaces, R2 buckets and queues with their sizes and depths; a namespace's keys, one value,
 * writing and deleting one; a bucket's objects by folder, deleting one; purging a queue. Members
 * read; a viewer cannot change anything; every change is an event naming who made it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { eventsOf } from '../_lib/apps.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const key = u.api_key;

const SERVER = `export default {
  async fetch(request, env) {
    await env.CACHE.put('greeting', 'hello', { metadata: { lang: 'en' } });
    await env.CACHE.put('bytes', new Uint8Array([0, 159, 146, 150]));
    await env.CACHE.put('user/1', JSON.stringify({ name: 'Ada' }));
    await env.BUCKET.put('photos/cat.txt', 'meow', { httpMetadata: { contentType: 'text/plain' } });
    await env.BUCKET.put('photos/2024/dog.txt', 'woof');
    await env.BUCKET.put('readme.md', '# hi');
    await env.JOBS.send({ n: 1 });
    await env.JOBS.send({ n: 2 }, { delaySeconds: 600 });
    return new Response('seeded');
  },
};`;

const BINDINGS = {
  kv_namespaces: [{ binding: 'CACHE' }],
  r2_buckets: [{ binding: 'BUCKET', bucket_name: 'media' }],
  queues: { producers: [{ binding: 'JOBS', queue: 'work' }] },
};

let appId = '';
const params = () => ({ app_id: appId });

test('an app seeds its bindings; the overview lists each with what it holds', async () => {
  const r = await h.call('PUT', '/v0/apps', {
    key,
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [
        file('public/index.html', 'x'),
        file('server.js', SERVER, 'text/javascript'),
        file('.platform/bindings.json', JSON.stringify(BINDINGS), 'application/json'),
      ],
    }),
  });
  assert.is(r.body.status, 'published', r.text);
  appId = r.body.app_id;
  assert.is((await h.call('GET', '/seed', { host: `${appId}.apps.localhost` })).text, 'seeded');
  const o = await h.api('GET /v0/apps/{app_id}/bindings', { key, params: params() });
  assert.equal(o.kv, [{ namespace: 'CACHE', bound: true, keys: 3, bytes: o.kv[0]!.bytes }]);
  assert.ok(o.kv[0]!.bytes >= 5 + 4 + 14);
  assert.equal(o.r2, [{ bucket: 'media', bound: true, objects: 3, bytes: 4 + 4 + 4 }]);
  assert.equal(o.queues, [
    {
      queue: 'work',
      produced: true,
      consumed: false,
      ready: 1,
      delayed: 1,
      in_flight: 0,
      dead_lettered: 0,
      dead_letter_queue: null,
    },
  ]);
});

test('KV: keys by prefix, a value as text or base64, written and deleted by a member', async () => {
  const all = await h.api('GET /v0/apps/{app_id}/kv/{namespace}/keys', {
    key,
    params: { ...params(), namespace: 'CACHE' },
  });
  assert.equal(
    all.keys.map((k) => [k.name, k.metadata]),
    [
      ['bytes', null],
      ['greeting', { lang: 'en' }],
      ['user/1', null],
    ],
  );
  const users = await h.api('GET /v0/apps/{app_id}/kv/{namespace}/keys', {
    key,
    params: { ...params(), namespace: 'CACHE' },
    query: { prefix: 'user/', limit: '1' },
  });
  assert.equal(
    users.keys.map((k) => k.name),
    ['user/1'],
  );
  // search: by a key's name, its value's text, or its metadata
  const found = async (search: string) =>
    (
      await h.api('GET /v0/apps/{app_id}/kv/{namespace}/keys', {
        key,
        params: { ...params(), namespace: 'CACHE' },
        query: { search },
      })
    ).keys.map((k) => k.name);
  assert.equal(await found('Ada'), ['user/1'], 'by value');
  assert.equal(await found('"lang"'), ['greeting'], 'by metadata');
  assert.equal(await found('greet'), ['greeting'], 'by name');
  assert.equal(await found('nobody'), []);
  const text = await h.api('GET /v0/apps/{app_id}/kv/{namespace}/value', {
    key,
    params: { ...params(), namespace: 'CACHE' },
    query: { key: 'greeting' },
  });
  assert.equal(text, {
    namespace: 'CACHE',
    key: 'greeting',
    size: 5,
    text: 'hello',
    base64: null,
    metadata: { lang: 'en' },
    expiration: null,
  });
  const bin = await h.api('GET /v0/apps/{app_id}/kv/{namespace}/value', {
    key,
    params: { ...params(), namespace: 'CACHE' },
    query: { key: 'bytes' },
  });
  assert.equal([bin.text, bin.base64], [null, Buffer.from([0, 159, 146, 150]).toString('base64')]);
  const put = await h.api('PUT /v0/apps/{app_id}/kv/{namespace}/value', {
    key,
    params: { ...params(), namespace: 'CACHE' },
    query: { key: 'note' },
    body: { value: 'from the console', metadata: { by: 'me' }, expiration_ttl: 3600 },
  });
  assert.is(put.text, 'from the console');
  assert.ok(put.expiration! > Date.now() / 1000 + 3500);
  const short = await h.answer('PUT /v0/apps/{app_id}/kv/{namespace}/value', {
    key,
    params: { ...params(), namespace: 'CACHE' },
    query: { key: 'x' },
    body: { value: 'v', expiration_ttl: 5 },
  });
  assert.is(short.status, 400);
  assert.match(short.error!.message, 'Expiration TTL must be at least 60');
  const gone = await h.api('DELETE /v0/apps/{app_id}/kv/{namespace}/value', {
    key,
    params: { ...params(), namespace: 'CACHE' },
    query: { key: 'note' },
  });
  assert.equal(gone, { namespace: 'CACHE', key: 'note', deleted: true });
  const again = await h.answer('DELETE /v0/apps/{app_id}/kv/{namespace}/value', {
    key,
    params: { ...params(), namespace: 'CACHE' },
    query: { key: 'note' },
  });
  assert.is(again.status, 404);
  const events = await eventsOf(h, key, appId, 'kv.changed_by_member');
  assert.match(events[0]!.message, /^KV key note of CACHE was written by .+@/);
});

test('R2: objects by folder; one deleted by a member', async () => {
  const top = await h.api('GET /v0/apps/{app_id}/r2/{bucket}/objects', {
    key,
    params: { ...params(), bucket: 'media' },
    query: { delimiter: '/' },
  });
  assert.equal(
    top.objects.map((o) => o.key),
    ['readme.md'],
  );
  assert.equal(top.prefixes, ['photos/']);
  const photos = await h.api('GET /v0/apps/{app_id}/r2/{bucket}/objects', {
    key,
    params: { ...params(), bucket: 'media' },
    query: { prefix: 'photos/', delimiter: '/' },
  });
  assert.equal(
    photos.objects.map((o) => [o.key, o.size, o.content_type]),
    [['photos/cat.txt', 4, 'text/plain']],
  );
  assert.equal(photos.prefixes, ['photos/2024/']);
  const bytes = await h.call('GET', `/v0/apps/${appId}/r2/media/object?key=photos%2Fcat.txt`, {
    key,
  });
  assert.is(bytes.status, 200);
  assert.is(bytes.text, 'meow');
  assert.is(bytes.headers.get('content-type'), 'text/plain');
  assert.is(bytes.headers.get('content-disposition'), "attachment; filename*=UTF-8''cat.txt");
  assert.match(bytes.headers.get('content-security-policy')!, 'sandbox');
  const del = await h.api('DELETE /v0/apps/{app_id}/r2/{bucket}/object', {
    key,
    params: { ...params(), bucket: 'media' },
    query: { key: 'readme.md' },
  });
  assert.equal(del, { bucket: 'media', key: 'readme.md', deleted: true });
  const missing = await h.answer('DELETE /v0/apps/{app_id}/r2/{bucket}/object', {
    key,
    params: { ...params(), bucket: 'media' },
    query: { key: 'readme' },
  });
  assert.is(missing.status, 404, 'a prefix of a key is not the key');
});

test('a viewer reads but changes nothing; purging a queue drops its waiting messages', async () => {
  const viewer = await newMember(h, u.account_id, 'viewer');
  const read = await h.answer('GET /v0/apps/{app_id}/bindings', {
    key: viewer.api_key,
    params: params(),
  });
  assert.is(read.status, 200);
  for (const refused of [
    await h.answer('POST /v0/apps/{app_id}/queues/{queue}/purge', {
      key: viewer.api_key,
      params: { ...params(), queue: 'work' },
    }),
    await h.answer('DELETE /v0/apps/{app_id}/kv/{namespace}/value', {
      key: viewer.api_key,
      params: { ...params(), namespace: 'CACHE' },
      query: { key: 'greeting' },
    }),
  ])
    assert.is(refused.status, 403, refused.text);
  const purged = await h.api('POST /v0/apps/{app_id}/queues/{queue}/purge', {
    key,
    params: { ...params(), queue: 'work' },
  });
  assert.equal(purged, { queue: 'work', purged: 2 });
  const o = await h.api('GET /v0/apps/{app_id}/bindings', { key, params: params() });
  assert.equal([o.queues[0]!.ready, o.queues[0]!.delayed], [0, 0]);
});

test.after(() => h.close());
test.run();

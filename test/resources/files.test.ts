import zlib from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { signPath } from '../../src/files/service.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { publishServerApp } from '../_lib/apps.ts';

// a CPU budget as long as the wall-clock limit: the last test copies and hashes 64 MiB of uploads in one call
const h = await createHarness({ PLATFORM_PLANS_FILE: 'test/fixtures/plans-cpu-as-wall.json' });
const u = await newUser(h);
const key = u.api_key;
const RPC = `export default { async fetch(req, ctx) {
  const { store, op, args } = await req.json();
  try {
    const s = ctx.files.store(store);
    const bytes = args[0] && args[0].b64 ? Uint8Array.from(atob(args[0].b64), (c) => c.charCodeAt(0)) : args[0];
    const out = op === 'createUpload' ? await s.createUpload(bytes, args[1]) : await s[op](...args);
    return Response.json({ ok: out });
  } catch (e) { return Response.json({ error: { code: e.code, message: e.message } }, { status: 400 }); }
} };`;
const resources = {
  auth: { mode: 'app_users', public_signup: true },
  files: {
    stores: {
      pics: { public: true, allowed_content_types: ['image/png', 'text/html'] },
      docs: { public: false, max_file_size_bytes: 1000 },
    },
  },
};
const pub = (
  await h.call('PUT', '/v0/apps', {
    key,
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [file('public/index.html', 'x'), file('server.js', RPC, 'text/javascript')],
      resources,
    }),
  })
).body;
const host = `${pub.app_id}.apps.localhost`;
const rpc = async (store: string, op: string, ...args: unknown[]) =>
  (await h.call('POST', '/rpc', { host, body: { store, op, args } })).body;
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const pathOf = (url: string) => url.replace(`http://${pub.app_id}.apps.localhost:8787`, '');

test('upload to a public store; served with its type, safe headers and a files.uploaded event', async () => {
  const r = await rpc(
    'pics',
    'createUpload',
    { b64: PNG.toString('base64') },
    { filename: 'logo é.png', content_type: 'image/png' },
  );
  assert.ok(r.ok, JSON.stringify(r));
  assert.match(r.ok.file_id, /^file_/);
  assert.equal(
    { ...r.ok, file_id: 'x', created_at: 'x' },
    {
      file_id: 'x',
      store: 'pics',
      filename: 'logo é.png',
      content_type: 'image/png',
      size: PNG.length,
      created_at: 'x',
    },
  );
  const url = (await rpc('pics', 'getPublicUrl', r.ok.file_id)).ok;
  assert.is(url, `http://${pub.app_id}.apps.localhost:8787/_platform/files/pics/${r.ok.file_id}`);
  const res = await h.server.request(`http://${host}${pathOf(url)}`);
  assert.is(res.status, 200);
  assert.equal(Buffer.from(await res.arrayBuffer()), PNG);
  assert.is(res.headers.get('content-type'), 'image/png');
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  assert.match(res.headers.get('content-security-policy')!, 'sandbox');
  assert.match(
    res.headers.get('content-disposition')!,
    /^inline; filename="logo _.png"; filename\*=UTF-8''logo%20%C3%A9.png$/,
  );
  assert.match(res.headers.get('etag')!, /^"[A-Za-z0-9_-]{43}"$/);
  const html = await rpc('pics', 'createUpload', '<script>alert(1)</script>', {
    filename: 'x.html',
    content_type: 'text/html',
  });
  const page = await h.server.request(`http://${host}/_platform/files/pics/${html.ok.file_id}`);
  assert.match(
    page.headers.get('content-disposition')!,
    /^attachment/,
    'HTML is downloaded, never rendered on the app origin',
  );
  const ev = await h.call('GET', `/v0/apps/${pub.app_id}/events?type=files.uploaded`, { key });
  assert.is(ev.body.events[0].metadata.store, 'pics');
  // a text file of some size goes out compressed to a client that accepts it; an image never
  const long = `<p>${'compressible words '.repeat(200)}</p>`;
  const doc = await rpc('pics', 'createUpload', long, {
    filename: 'long.html',
    content_type: 'text/html',
  });
  const br = await h.server.request(`http://${host}/_platform/files/pics/${doc.ok.file_id}`, {
    headers: { 'accept-encoding': 'br' },
  });
  assert.is(br.headers.get('content-encoding'), 'br');
  assert.is(br.headers.get('vary'), 'accept-encoding');
  assert.match(br.headers.get('etag')!, /^W\/"/);
  assert.is(zlib.brotliDecompressSync(Buffer.from(await br.arrayBuffer())).toString(), long);
  const img = await h.server.request(`http://${host}${pathOf(url)}`, {
    headers: { 'accept-encoding': 'br' },
  });
  assert.is(img.headers.get('content-encoding'), null);
  assert.equal(Buffer.from(await img.arrayBuffer()), PNG);
});

test('store limits: size, allowed content types, declared stores only', async () => {
  assert.is(
    (await rpc('pics', 'createUpload', 'x', { filename: 'a.txt', content_type: 'text/plain' }))
      .error.code,
    'content_type_not_allowed',
  );
  assert.is(
    (
      await rpc('docs', 'createUpload', 'x'.repeat(1001), {
        filename: 'big.txt',
        content_type: 'text/plain',
      })
    ).error.code,
    'file_too_large',
  );
  assert.ok(
    (
      await rpc('docs', 'createUpload', 'x'.repeat(1000), {
        filename: 'ok.txt',
        content_type: 'text/plain',
      })
    ).ok,
  );
  assert.is(
    (await rpc('nope', 'createUpload', 'x', { filename: 'a', content_type: 'text/plain' })).error
      .code,
    'store_not_declared',
  );
  assert.is(
    (await rpc('docs', 'createUpload', 'x', { filename: '../etc', content_type: 'text/plain' }))
      .error.code,
    'invalid_file',
  );
  assert.is((await rpc('docs', 'getPublicUrl', 'file_x')).error.code, 'store_not_public');
});

test('private files: a signed URL works until it expires; tampering is refused; a session also works', async () => {
  const up = (
    await rpc('docs', 'createUpload', 'secret report', {
      filename: 'r.txt',
      content_type: 'text/plain',
    })
  ).ok;
  const other = (
    await rpc('docs', 'createUpload', 'another', { filename: 'o.txt', content_type: 'text/plain' })
  ).ok;
  const signed = (await rpc('docs', 'createSignedUrl', up.file_id, { expires_in_seconds: 60 }))
    .ok as string;
  const ok = await h.server.request(`http://${host}${pathOf(signed)}`);
  assert.is(ok.status, 200);
  assert.is(await ok.text(), 'secret report');
  assert.is(ok.headers.get('cache-control'), 'private, no-store');
  const u2 = new URL(signed);
  const tampered = `/_platform/files/docs/${up.file_id}?expires=${Number(u2.searchParams.get('expires')) + 1000}&sig=${u2.searchParams.get('sig')}`;
  assert.is((await h.server.request(`http://${host}${tampered}`)).status, 403);
  const moved = `/_platform/files/docs/${other.file_id}${u2.search}`;
  assert.is(
    (await h.server.request(`http://${host}${moved}`)).status,
    403,
    'a signature is bound to its file',
  );
  const past = Math.floor(Date.now() / 1000) - 10;
  const path = `/_platform/files/docs/${up.file_id}`;
  assert.is(
    (
      await h.server.request(
        `http://${host}${path}?expires=${past}&sig=${signPath(h.deps, pub.app_id, path, past)}`,
      )
    ).status,
    403,
    'expired',
  );
  assert.is(
    (await h.server.request(`http://${host}${path}`)).status,
    401,
    'neither a session nor a signature',
  );
  const s = await h.call('POST', '/_platform/auth/signup', {
    host,
    body: { email: 'f@example.com', password: 'a long password' },
  });
  const withSession = await h.server.request(`http://${host}${path}`, {
    headers: { cookie: s.headers.get('set-cookie')!.split(';')[0]! },
  });
  assert.is(withSession.status, 200);
  assert.is(
    (await rpc('docs', 'createSignedUrl', up.file_id, { expires_in_seconds: 0 })).error.code,
    'invalid_request',
  );
});

test('delete removes a file from serving and records files.deleted', async () => {
  const up = (
    await rpc(
      'pics',
      'createUpload',
      { b64: PNG.toString('base64') },
      { filename: 'd.png', content_type: 'image/png' },
    )
  ).ok;
  assert.equal((await rpc('pics', 'delete', up.file_id)).ok, { deleted: true });
  assert.equal((await rpc('pics', 'delete', up.file_id)).ok, { deleted: false });
  assert.is(
    (await h.server.request(`http://${host}/_platform/files/pics/${up.file_id}`)).status,
    404,
  );
  const ev = await h.call('GET', `/v0/apps/${pub.app_id}/events?type=files.deleted`, { key });
  assert.is(ev.body.events.length, 1);
});

test('a File from a form keeps its name and type; a view stores only its own bytes; anything else is a TypeError', async () => {
  const app = await publishServerApp(
    h,
    key,
    `export default { async fetch(req, ctx) {
      const inbox = ctx.files.store('inbox');
      const path = new URL(req.url).pathname;
      if (path === '/form') return Response.json(await inbox.createUpload((await req.formData()).get('doc')));
      if (path === '/form-renamed') return Response.json(await inbox.createUpload((await req.formData()).get('doc'), { filename: 'renamed.txt' }));
      if (path === '/view') return Response.json(await inbox.createUpload(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]).subarray(2, 5), { filename: 'v.bin', content_type: 'application/octet-stream' }));
      try { await inbox.createUpload(42, { filename: 'a.txt', content_type: 'text/plain' }); } catch (e) { return Response.json({ name: e.name, message: e.message }); }
    } };`,
    { resources: { files: { stores: { inbox: { public: true } } } } },
  );
  const served = async (id: string) =>
    Buffer.from(
      await (
        await h.server.request(`http://${app.host}/_platform/files/inbox/${id}`)
      ).arrayBuffer(),
    );
  const form = () => {
    const f = new FormData();
    f.set('doc', new Blob(['# Notes\nfirst line\n'], { type: 'text/markdown' }), 'notes.md');
    return f;
  };
  const uploaded = await h.server.request(`http://${app.host}/form`, {
    method: 'POST',
    body: form(),
  });
  assert.is(uploaded.status, 200, await uploaded.clone().text());
  const rec = await uploaded.json();
  assert.equal([rec.filename, rec.content_type, rec.size], ['notes.md', 'text/markdown', 19]);
  assert.is((await served(rec.file_id)).toString(), '# Notes\nfirst line\n');
  const renamed = await (
    await h.server.request(`http://${app.host}/form-renamed`, { method: 'POST', body: form() })
  ).json();
  assert.equal([renamed.filename, renamed.content_type], ['renamed.txt', 'text/markdown']);
  const view = await (await h.server.request(`http://${app.host}/view`)).json();
  assert.is(view.size, 3);
  assert.equal([...(await served(view.file_id))], [3, 4, 5]);
  assert.equal(await (await h.server.request(`http://${app.host}/other`)).json(), {
    name: 'TypeError',
    message: 'createUpload: bytes must be a string, an ArrayBuffer, a typed array or a Blob',
  });
});

test("one call's uploads may send 64 MiB in all; the one that would pass it is refused before it is copied", async () => {
  const app = await publishServerApp(
    h,
    key,
    `export default { async fetch(req, ctx) {
      const big = ctx.files.store('big');
      const out = [];
      for (const n of [3e6, 20e6, 20e6, 20e6, 5e6]) {
        out.push(await big.createUpload(new Uint8Array(n).fill(out.length + 1), { filename: 'b.bin', content_type: 'application/octet-stream' }).then((f) => f.size, (e) => e.code));
      }
      return Response.json(out);
    } };`,
    { resources: { files: { stores: { big: { public: false, max_file_size_bytes: 25e6 } } } } },
  );
  const r = await h.call('GET', '/many', { host: app.host });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, [3e6, 20e6, 20e6, 20e6, 'payload_too_large']);
});

test.after(() => h.close());
test.run();

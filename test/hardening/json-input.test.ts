/**
 * Hostile JSON: prototype-named keys and deep nesting are a 400 naming the field, never a 500; app
 * code's platform calls are bounded before the main thread parses them.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const u = await newUser(h);
const deep = (n: number, leaf = '1') => '{"a":'.repeat(n) + leaf + '}'.repeat(n);

test('__proto__, constructor and toString keys are refused as unknown fields', async () => {
  const routes: [string, string][] = [
    ['POST', '/v0/auth/api-keys'],
    ['PUT', '/v0/apps'],
    ['POST', '/v0/auth/email/request'],
    ['POST', `/v0/accounts/${u.account_id}/members`],
  ];
  for (const key of ['__proto__', 'constructor', 'toString']) {
    for (const [method, path] of routes) {
      const r = await h.call(method, path, {
        key: u.api_key,
        rawBody: `{"${key}": 1}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.is(r.status, 400, `${method} ${path} with ${key}: ${r.text}`);
      assert.ok(
        Object.keys(r.body.error.details.fields).includes(key) ||
          r.body.error.details.fields['(root)'],
        `${key} is named`,
      );
    }
  }
});

test('a body nested deeper than 64 levels is a 400 naming where', async () => {
  const body = JSON.stringify({ ...site({ provenance: {} }) }).replace(
    '"provenance":{}',
    `"provenance":${deep(5000)}`,
  );
  const r = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    rawBody: body,
    headers: { 'content-type': 'application/json' },
  });
  assert.is(r.status, 400, r.text);
  assert.is(r.body.error.code, 'invalid_request');
  assert.ok(
    Object.keys(r.body.error.details.fields)[0]!.startsWith('provenance.a.a'),
    JSON.stringify(r.body.error.details),
  );
  const fine = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    rawBody: `${JSON.stringify(site()).slice(0, -1)},"provenance":${deep(20)}}`,
    headers: { 'content-type': 'application/json' },
  });
  assert.is(fine.status, 200, `20 levels are fine: ${fine.text}`);
});

test('a NUL character (U+0000), which Postgres cannot store, is a 400 naming the field, never a 500', async () => {
  const cases: [string, string, unknown, string][] = [
    ['PUT', '/v0/apps', site({ app: { name: 'a\u0000b' } }), 'app.name'],
    ['PUT', '/v0/apps', site({ provenance: { note: 'a\u0000b' } }), 'provenance.note'],
    ['PUT', '/v0/apps', site({ provenance: { 'k\u0000': 1 } }), 'provenance.k\u0000'],
    ['POST', '/v0/auth/api-keys', { name: 'a\u0000b' }, 'name'],
  ];
  for (const [method, path, body, field] of cases) {
    const r = await h.call(method, path, { key: u.api_key, body });
    assert.is(r.status, 400, `${method} ${path}: ${r.text}`);
    assert.is(r.body.error.code, 'invalid_request');
    assert.ok(r.body.error.details.fields[field], `${field} is named: ${r.text}`);
  }
});

test('app data: a deep json value from the browser or from server code is refused, the app keeps serving', async () => {
  const server = `export default { async fetch(req, ctx) {
    let v = 1; for (let i = 0; i < 5000; i++) v = { a: v };
    try { await ctx.data.collection('notes').create({ body: v }); return new Response('stored'); }
    catch (e) { return Response.json({ code: e.code }, { status: 400 }); } } };`;
  const app = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      resources: {
        data: {
          collections: {
            notes: { fields: { body: 'json' }, access: { read: 'public', write: 'public' } },
          },
        },
      },
      files: [file('public/index.html', 'hi'), file('server.js', server, 'text/javascript')],
    }),
  });
  assert.is(app.status, 200, app.text);
  const host = `${app.body.app_id}.apps.localhost`;
  const fromBrowser = await h.call('POST', '/_platform/data/notes', {
    host,
    rawBody: `{"body":${deep(5000)}}`,
    headers: { 'content-type': 'application/json' },
  });
  assert.is(fromBrowser.status, 400, fromBrowser.text);
  const fromServer = await h.call('GET', '/x', { host });
  assert.is(fromServer.status, 400, fromServer.text);
  assert.equal(fromServer.body, { code: 'invalid_value' });
  const ok = await h.call('POST', '/_platform/data/notes', {
    host,
    body: { body: { nested: { fine: true } } },
  });
  assert.is(ok.status, 201, ok.text);
});

// the app's own work is heavy (megabytes of strings): on a full CPU budget, not hostile.test.ts's 50 ms
test("platform calls' arguments are bounded before the main thread parses them, whatever app code does to JSON.stringify; a large upload still goes", async () => {
  const app = await publishServerApp(
    h,
    u.api_key,
    `export default { async fetch(request, ctx) {
      const notes = ctx.data.collection('notes');
      const outcome = (p) => p.then(() => 'ok', (e) => e.code);
      const path = new URL(request.url).pathname;
      if (path === '/rows') {
        // 600,000 numbers: 1.2 MB of JSON, over one call's 1 MiB and 64 KiB (a row holds at most 1 MiB)
        const tooLarge = await outcome(notes.create({ body: 'x', meta: new Array(600000).fill(0) }));
        // rows of 1 MB each: the ninth passes the request's 8 MiB
        const rows = [];
        for (let i = 0; i < 9; i++) rows.push(await outcome(notes.create({ body: 'y'.repeat(1000000) })));
        return Response.json({ tooLarge, rows });
      }
      if (path === '/upload') {
        // 3 MB of bytes: far over one call's 1 MiB and 64 KiB of JSON, still a valid upload (bytes do not travel as JSON)
        return Response.json({ upload: await outcome(ctx.files.store('blobs').createUpload(new Uint8Array(3000000).fill(7), { filename: 'big.bin', content_type: 'application/octet-stream' })) });
      }
      // the prelude's JSON.stringify replaced: 10 MB of structured JSON handed to the host as it stands
      const stringify = JSON.stringify;
      JSON.stringify = () => '["notes",{"body":"x","meta":[' + '0,'.repeat(5000000) + '0]}]';
      const forged = outcome(notes.create({ body: 'x' }));
      JSON.stringify = stringify;
      return Response.json({ forged: await forged });
    } };`,
    {
      resources: {
        data: { collections: { notes: { fields: { body: 'string', meta: 'json' } } } },
        files: { stores: { blobs: { public: false, max_file_size_bytes: 5000000 } } },
      },
    },
  );
  const forged = await h.call('GET', '/forged', { host: app.host });
  assert.is(forged.status, 200, forged.text);
  assert.equal(forged.body, { forged: 'payload_too_large' });
  const rows = await h.call('GET', '/rows', { host: app.host });
  assert.is(rows.status, 200, rows.text);
  assert.equal(rows.body, {
    tooLarge: 'payload_too_large',
    rows: [...Array(8).fill('ok'), 'payload_too_large'],
  });
  const upload = await h.call('GET', '/upload', { host: app.host });
  assert.is(upload.status, 200, upload.text);
  assert.equal(upload.body, { upload: 'ok' });
});

test.after(() => h.close());
test.run();

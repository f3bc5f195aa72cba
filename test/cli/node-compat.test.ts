/**
 * Node's built-in modules in server code, as Cloudflare's nodejs_compat offers them: the CLI bundles
 * `node:*` imports from polyfills (unenv; string_decoder and assert from npm; crypto's hashes and
 * HMAC over Node's own), each answer here compared with Node's own answer to the same calls; and a
 * module with no meaning here (`fs`, `net`, `child_process`) stops the publish with one line that
 * names it and what to use instead, unless the wrangler config asks for `nodejs_compat` (a stub).
 */
import * as nodeAssert from 'node:assert';
import { createHash, createHmac } from 'node:crypto';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, writeSite } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `cli-node-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const MANIFEST = {
  app: { name: 'node compat' },
  runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
};

const SERVER = `import { createHash, createHmac, randomBytes, timingSafeEqual, webcrypto } from 'node:crypto';
import { Buffer as B } from 'node:buffer';
import path from 'path';
import { EventEmitter } from 'node:events';
import util from 'node:util';
import querystring from 'node:querystring';
import { StringDecoder } from 'node:string_decoder';
import assert from 'node:assert';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import { env } from 'node:process';

export default {
  async fetch(request) {
    const out = {};
    out.sha256 = createHash('sha256').update('hello ').update(B.from('world')).digest('hex');
    out.md5 = createHash('md5').update('x').digest('base64');
    out.hmac = createHmac('sha256', 'key').update('data').digest('hex');
    out.random = randomBytes(16).length;
    out.safeEqual = [timingSafeEqual(B.from('abc'), B.from('abc')), timingSafeEqual(B.from('abc'), B.from('abd'))];
    out.webcrypto = typeof webcrypto.subtle.digest;
    out.globalBuffer = Buffer.from('aGVsbG8=', 'base64').toString('utf8') + ' ' + (Buffer === B);
    out.join = path.join('/a/b', '../c', 'd.txt');
    const e = new EventEmitter(); let got = null; e.on('x', (v) => (got = v)); e.emit('x', 42); out.events = got;
    out.format = util.format('%s is %d', 'answer', 42);
    out.qs = querystring.stringify({ a: 1, b: ['x', 'y'] });
    const d = new StringDecoder('utf8'); const euro = B.from('€'); out.decoder = d.write(euro.subarray(0, 1)) + '|' + d.write(euro.subarray(1));
    try { assert.strictEqual(1, 2); out.assert = 'no throw'; } catch (err) { out.assert = err.name; }
    const als = new AsyncLocalStorage(); out.als = als.run('store', () => als.getStore());
    const chunks = []; for await (const c of Readable.from(['a', 'b', 'c'])) chunks.push(c); out.stream = chunks.join('');
    out.env = env.NODE_ENV;
    try { createHash('nope'); out.badHash = 'made'; } catch (err) { out.badHash = err.message; }
    return Response.json(out);
  },
};`;

test("node:crypto, buffer, path, events, util, querystring, string_decoder, assert, async_hooks, stream and process answer as Node's do", async () => {
  const dir = await writeSite(work, 'node-app', MANIFEST, {
    'public/index.html': 'x',
    'server.js': SERVER,
  });
  const r = await cli(['publish', dir]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = (await h.api('GET /v0/apps', { key: u.api_key })).apps.find(
    (a) => a.name === 'node compat',
  )!.app_id;
  const res = await h.call('GET', '/run', { host: `${appId}.apps.localhost` });
  const why =
    res.status === 200
      ? ''
      : JSON.stringify(
          (
            await h.api('GET /v0/apps/{app_id}/events', {
              key: u.api_key,
              params: { app_id: appId },
              query: { type: 'runtime.request_error' },
            })
          ).events[0]?.metadata,
        );
  assert.is(res.status, 200, `${res.text} ${why}`);
  let assertName = '';
  try {
    nodeAssert.strictEqual(1, 2);
  } catch (err) {
    assertName = (err as Error).name;
  }
  assert.equal(res.body, {
    sha256: createHash('sha256').update('hello world').digest('hex'),
    md5: createHash('md5').update('x').digest('base64'),
    hmac: createHmac('sha256', 'key').update('data').digest('hex'),
    random: 16,
    safeEqual: [true, false],
    webcrypto: 'function',
    globalBuffer: 'hello true',
    join: path.join('/a/b', '../c', 'd.txt'),
    events: 42,
    format: 'answer is 42',
    qs: 'a=1&b=x&b=y',
    decoder: '|€',
    assert: assertName,
    als: 'store',
    stream: 'abc',
    env: 'production',
    badHash: 'Digest method not supported',
  });
});

test('a module with no meaning here stops the publish with one line naming it and what to use instead', async () => {
  for (const [spec, says] of [
    ['node:fs', 'there is no file system here'],
    ['fs/promises', 'there is no file system here'],
    ['node:net', 'there are no sockets here: use fetch()'],
    ['child_process', 'there are no processes or threads here'],
  ] as const) {
    const dir = await writeSite(work, 'no-fs', MANIFEST, {
      'public/index.html': 'x',
      'server.js': `import * as m from '${spec}'; export default { fetch() { return new Response(String(Object.keys(m).length)); } };`,
    });
    const r = await cli(['publish', dir]);
    assert.is(r.code, 1, `${spec}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, `"${spec}" cannot be used in server code: ${says}`);
  }
});

test('with nodejs_compat in the wrangler config, those modules load as stubs: the publish names them, a call fails naming itself', async () => {
  const manifest = { ...MANIFEST, app: { name: 'node stubs' } };
  const dir = await writeSite(work, 'stubs', manifest, {
    'public/index.html': 'x',
    'wrangler.jsonc': JSON.stringify({
      name: 'stubs',
      main: 'server.js',
      compatibility_flags: ['nodejs_compat'],
    }),
    'server.js': `import fs from 'node:fs';
import { createServer } from 'node:http';
export default {
  fetch() {
    let read;
    try { fs.readFileSync('/etc/hostname'); read = 'read'; } catch (e) { read = e.message; }
    return Response.json({ read, server: typeof createServer });
  },
};`,
  });
  const r = await cli(['publish', dir]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout + r.stderr, 'nodejs_compat: node:fs, node:http load as stubs here');
  const appId = (await h.api('GET /v0/apps', { key: u.api_key })).apps.find(
    (a) => a.name === 'node stubs',
  )!.app_id;
  const res = await h.call('GET', '/run', { host: `${appId}.apps.localhost` });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, {
    read: '[unenv] fs.readFileSync is not implemented yet!',
    server: 'function',
  });
});

test("require() of a built-in is a plain object the app may patch, shared by every require, as Node's are", async () => {
  const manifest = { ...MANIFEST, app: { name: 'node cjs' } };
  const dir = await writeSite(work, 'cjs', manifest, {
    'public/index.html': 'x',
    'lib.cjs': `const timers = require('node:timers');
timers.setImmediate = function patched() { return 'patched'; };
exports.seen = require('timers').setImmediate.name;
exports.als = require('node:async_hooks').AsyncLocalStorage === globalThis[Symbol.for('platform.async_hooks')].AsyncLocalStorage;`,
    'server.js': `import lib from './lib.cjs';
import { setTimeout as later } from 'node:timers';
export default { fetch: () => Response.json({ ...lib, esm: typeof later }) };`,
  });
  const r = await cli(['publish', dir]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = (await h.api('GET /v0/apps', { key: u.api_key })).apps.find(
    (a) => a.name === 'node cjs',
  )!.app_id;
  const res = await h.call('GET', '/run', { host: `${appId}.apps.localhost` });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { seen: 'patched', als: true, esm: 'function' });
});

test('require() of a built-in that is a function in Node is that function: EventEmitter, Stream, assert, Module', async () => {
  const manifest = { ...MANIFEST, app: { name: 'node cjs functions' } };
  const dir = await writeSite(work, 'cjs-functions', manifest, {
    'public/index.html': 'x',
    'lib.cjs': `const EventEmitter = require('events');
class Bus extends EventEmitter {}
const bus = new Bus(); let heard = null; bus.on('x', (v) => (heard = v)); bus.emit('x', 7);
const Stream = require('node:stream');
const assert = require('assert');
const Module = require('module');
const immediate = setImmediate(() => {});
exports.out = {
  heard, ownEmitter: EventEmitter.EventEmitter === EventEmitter, stream: typeof Stream, readable: typeof Stream.Readable,
  assert: typeof assert, strictEqual: typeof assert.strictEqual, module: typeof Module,
  moduleRequire: typeof Module.prototype.require, createRequire: typeof Module.createRequire,
  isBuiltin: Module.isBuiltin('node:fs'), unref: immediate.unref() === immediate, hasRef: immediate.hasRef(),
};
clearImmediate(immediate);`,
    'server.js': `import lib from './lib.cjs';
import { createRequire } from 'node:module';
export default { fetch: () => Response.json({ ...lib.out, esmCreateRequire: typeof createRequire }) };`,
  });
  const r = await cli(['publish', dir]);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = (await h.api('GET /v0/apps', { key: u.api_key })).apps.find(
    (a) => a.name === 'node cjs functions',
  )!.app_id;
  const res = await h.call('GET', '/run', { host: `${appId}.apps.localhost` });
  assert.is(res.status, 200, res.text);
  const Module = (await import('node:module')).default;
  assert.equal(res.body, {
    heard: 7,
    ownEmitter: true,
    stream: 'function',
    readable: 'function',
    assert: 'function',
    strictEqual: 'function',
    module: typeof Module,
    moduleRequire: typeof Module.prototype.require,
    createRequire: 'function',
    isBuiltin: true,
    unref: true,
    hasRef: true,
    esmCreateRequire: 'function',
  });
});

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();

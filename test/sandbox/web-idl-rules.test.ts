/**
 * The argument and state rules of the web platform's classes, where the sandbox answered otherwise
 * than the standards (and Node, and workerd), found by the web-platform-tests: Headers' init and
 * iterators, Blob/File arguments, getRandomValues' errors, Request's methods and duplex, reading a
 * null or empty body, a body after it was read, FormData iterated while it changes, a stream of
 * non-bytes read whole, the abort event's target and AbortSignal.any's order, and
 * DecompressionStream's checks (corrupt, truncated, trailing bytes: TypeError). The same code runs
 * in Node; its answers must match but where `NODE_DEPARTS` says.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { onDeno } from '../../src/lib/on-deno.ts';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { jsonCaller } from '../_lib/sandbox.ts';

const CASES = `
const out = {};
const t = async (name, f) => {
  try { out[name] = await f(); } catch (e) { out[name] = 'throws ' + e.name + (typeof e.code === 'number' && e.code ? ' ' + e.code : ''); }
};
const proto2 = (it) => Object.getPrototypeOf(Object.getPrototypeOf(it)) === Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
const bytes = async (readable) => new Uint8Array(await new Response(readable).arrayBuffer());
const squeeze = async (format, data) => bytes(new Blob([data]).stream().pipeThrough(new CompressionStream(format)));
const open = async (format, data) => {
  try { return new TextDecoder().decode(await bytes(new Blob([data]).stream().pipeThrough(new DecompressionStream(format)))); }
  catch (e) { return 'throws ' + e.name; }
};

await t('getRandomValues over 65536 bytes', () => crypto.getRandomValues(new Uint8Array(65537)).length);
await t('getRandomValues of floats', () => crypto.getRandomValues(new Float64Array(2)).length);
await t('getRandomValues of a DataView', () => crypto.getRandomValues(new DataView(new ArrayBuffer(4))).byteLength);
await t('getRandomValues of 65536 bytes', () => crypto.getRandomValues(new Uint8Array(65536)).length);

await t('Headers(null)', () => new Headers(null));
await t('Headers(1)', () => new Headers(1));
await t('Headers of a pair that is not a sequence', () => new Headers(['ab']));
await t('Headers of a record, own enumerable keys in order', () => {
  const rec = Object.create({ inherited: 'no' }, { b: { value: '2', enumerable: true }, hidden: { value: 'x' }, a: { value: '1', enumerable: true } });
  return [...new Headers(rec)];
});
await t('Headers record reads each key once, after its descriptor', () => {
  const log = [];
  const p = new Proxy({ a: '1' }, {
    ownKeys: (o) => { log.push('ownKeys'); return Reflect.ownKeys(o); },
    getOwnPropertyDescriptor: (o, k) => { log.push('desc ' + k); return Reflect.getOwnPropertyDescriptor(o, k); },
    get: (o, k) => { log.push('get ' + String(k)); return o[k]; },
  });
  new Headers(p);
  return log.filter((l) => l !== 'get Symbol(Symbol.iterator)');
});
await t('Headers iterators', () => {
  const h = new Headers({ b: '2', a: '1', 'set-cookie': 'x' });
  h.append('set-cookie', 'y');
  const e = h.entries();
  return [Object.prototype.toString.call(e), proto2(e), proto2(h.keys()), [...h.keys()], [...h.values()], [...h]];
});
await t('Headers iterator sees a header added while iterating', () => {
  const h = new Headers({ a: '1', c: '3' });
  const seen = [];
  for (const [k] of h) { seen.push(k); if (k === 'a') h.set('b', '2'); }
  return seen;
});

await t('class strings', () => [new Headers(), new Request('http://a.test/'), new Response(), new Headers().keys()].map((o) => Object.prototype.toString.call(o)));
await t('Blob of a string', () => new Blob('abc'));
await t('Blob of true', () => new Blob(true));
await t('Blob with options 123', () => new Blob([], 123));
await t('Blob with bad endings', () => new Blob([], { endings: 'other' }));
await t('Blob of an iterable object', async () => new Blob({ *[Symbol.iterator]() { yield 'a'; yield 'b'; } }).text());
await t('File with options null', async () => { const f = new File(['x'], 'n', null); return [f.type, f.name, await f.text()]; });
await t('File with options "abc"', () => new File(['x'], 'n', 'abc'));
await t('File of 0', () => new File(0, 'n'));

await t('Request with CONNECT', () => new Request('http://a.test/', { method: 'CONNECT' }));
await t('Request with trace', () => new Request('http://a.test/', { method: 'trace' }));
await t('Request with a method that is not a token', () => new Request('http://a.test/', { method: 'GE T' }));
await t('Request with duplex full', () => new Request('http://a.test/', { method: 'POST', body: 'x', duplex: 'full' }));
await t('Request with duplex half', () => new Request('http://a.test/', { method: 'POST', body: new ReadableStream(), duplex: 'half' }).method);
await t('Request from one whose body stream is locked', () => {
  const r = new Request('http://a.test/', { method: 'POST', body: 'x' });
  r.body.getReader();
  return new Request(r);
});
await t('... but with a body of its own', async () => {
  const r = new Request('http://a.test/', { method: 'POST', body: 'x' });
  r.body.getReader();
  return new Request(r, { body: 'y' }).text();
});
await t('Request FormData body keeps the caller\\'s Content-Type', () => new Request('http://a.test/', { method: 'POST', body: new FormData(), headers: { 'content-type': 'test/only; mime=type' } }).headers.get('content-type'));
await t('Response FormData body keeps the caller\\'s Content-Type', () => new Response(new FormData(), { headers: { 'content-type': 'test/only' } }).headers.get('content-type'));

await t('a request made from another takes its body', async () => {
  const a = new Request('http://a.test/', { method: 'POST', body: 'x' });
  const b = new Request(a);
  let again;
  try { new Request(a); again = 'made'; } catch (e) { again = e.name; }
  return [a.bodyUsed, await b.text(), again];
});
await t('a clone leaves the request unread', async () => {
  const a = new Request('http://a.test/', { method: 'POST', body: 'x' });
  const b = a.clone();
  return [a.bodyUsed, await b.text(), await a.text()];
});
await t('an object body is its string, as text', async () => {
  const r = new Request('http://a.test/', { method: 'POST', body: { toString: () => 'hi!' } });
  return [r.headers.get('content-type'), await r.text()];
});
await t('reading a null body leaves it unused', async () => {
  const q = new Request('http://a.test/', { method: 'POST' });
  const r = new Response(null);
  return [await q.text(), q.bodyUsed, await r.arrayBuffer().then((b) => b.byteLength), r.bodyUsed, r.body];
});
await t('an empty body is a stream', async () => {
  const r = new Response('');
  const b = new Response(new Blob([]));
  return [r.body instanceof ReadableStream, (await r.body.getReader().read()).done, b.body instanceof ReadableStream];
});
await t('a body read whole is then locked', async () => {
  const r = new Response('x');
  await r.text();
  try { r.body.getReader(); return 'reader'; } catch (e) { return [e.name, r.body.locked, r.bodyUsed]; }
});
await t("a clone's stream gets copies of the chunks", async () => {
  const chunk = new Int16Array(new ArrayBuffer(16), 2, 2);
  const r = new Response(new ReadableStream({ start(c) { c.enqueue(chunk); c.close(); } }));
  const copy = r.clone();
  const a = (await r.body.getReader().read()).value;
  const b = (await copy.body.getReader().read()).value;
  return [a === chunk, b !== chunk, b instanceof Int16Array, [...b]];
});
await t('Response.json with 204', () => Response.json({}, { status: 204 }));
await t('a stream of strings read whole', () => new Response(new ReadableStream({ start(c) { c.enqueue('str'); c.close(); } })).text());
await t('a stream of ArrayBuffers read whole', () => new Response(new ReadableStream({ start(c) { c.enqueue(new ArrayBuffer(2)); c.close(); } })).arrayBuffer());

await t('FormData iterated while an entry ahead is deleted', () => {
  const f = new FormData();
  f.append('foo', '1'); f.append('baz', '2'); f.append('BAR', '3');
  const seen = [];
  for (const [k] of f) { seen.push(k); if (k === 'foo') f.delete('baz'); }
  return [seen, Object.prototype.toString.call(f.entries()), proto2(f.values())];
});

await t('the abort event, through onabort and listeners', () => {
  const c = new AbortController();
  const seen = [];
  c.signal.addEventListener('abort', (e) => seen.push(['listener', e.target === c.signal]));
  c.signal.onabort = (e) => seen.push(['onabort', e.target === c.signal, e.currentTarget === c.signal, e.type]);
  c.abort();
  return [seen, typeof c.signal.onabort];
});
await t('AbortSignal.any fires in order, each already aborted', () => {
  const c = new AbortController();
  const s1 = AbortSignal.any([c.signal]);
  const s2 = AbortSignal.any([s1]);
  let order = '';
  const states = [];
  c.signal.addEventListener('abort', () => { order += '0'; states.push(s1.aborted, s2.aborted); });
  s1.addEventListener('abort', () => { order += '1'; });
  s2.addEventListener('abort', (e) => { order += '2'; states.push(e.target === s2, s2.reason.name); });
  c.abort();
  return [order, states];
});

await t('encodeInto a view that is not a Uint8Array', () => new TextEncoder().encodeInto('a', new Int8Array(4)));
await t('a TextDecoderStream fed a string', async () => {
  const s = new TextDecoderStream();
  s.readable.getReader().read().catch(() => {});
  return s.writable.getWriter().write('str').then(() => 'written', (e) => 'rejects ' + e.name);
});
const encodeChunks = async (parts) => {
  const s = new TextEncoderStream();
  const w = s.writable.getWriter();
  for (const p of parts) w.write(p);
  w.close();
  const chunks = [];
  const r = s.readable.getReader();
  for (let x = await r.read(); !x.done; x = await r.read()) chunks.push([...x.value]);
  return chunks;
};
await t('TextEncoderStream joins a surrogate pair split across chunks', () => encodeChunks(['\\ud83d', '\\ude00', '']));
await t('TextEncoderStream ends a lone high surrogate on its own', () => encodeChunks(['a\\ud83d']));
const text = new TextEncoder().encode('hello hello hello hello');
for (const format of ['gzip', 'deflate', 'deflate-raw']) {
  const packed = await squeeze(format, text);
  await t(format + ' round trip', () => open(format, packed));
  await t(format + ' truncated', () => open(format, packed.slice(0, packed.length - 3)));
  if (format !== 'deflate-raw') await t(format + ' with a flipped byte in its check', () => { const b = packed.slice(); b[b.length - 2] ^= 0xff; return open(format, b); });
  await t(format + ' garbage', () => open(format, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])));
}
for (const format of ['gzip', 'deflate']) {
  const packed = await squeeze(format, text);
  await t(format + ' with trailing bytes', () => { const b = new Uint8Array(packed.length + 3); b.set(packed); b.set([1, 2, 3], packed.length); return open(format, b); });
}
return out;`;

/** The standards' answers; Node's agree but where `NODE_DEPARTS` says. */
const EXPECTED: Record<string, unknown> = {
  'getRandomValues over 65536 bytes': 'throws QuotaExceededError 22',
  'getRandomValues of floats': 'throws TypeMismatchError 17',
  'getRandomValues of a DataView': 'throws TypeMismatchError 17',
  'getRandomValues of 65536 bytes': 65536,
  'Headers(null)': 'throws TypeError',
  'Headers(1)': 'throws TypeError',
  'Headers of a pair that is not a sequence': 'throws TypeError',
  'Headers of a record, own enumerable keys in order': [
    ['a', '1'],
    ['b', '2'],
  ],
  'Headers record reads each key once, after its descriptor': ['ownKeys', 'desc a', 'get a'],
  'Headers iterators': [
    '[object Headers Iterator]',
    true,
    true,
    ['a', 'b', 'set-cookie', 'set-cookie'],
    ['1', '2', 'x', 'y'],
    [
      ['a', '1'],
      ['b', '2'],
      ['set-cookie', 'x'],
      ['set-cookie', 'y'],
    ],
  ],
  'Headers iterator sees a header added while iterating': ['a', 'b', 'c'],
  'class strings': [
    '[object Headers]',
    '[object Request]',
    '[object Response]',
    '[object Headers Iterator]',
  ],
  'Blob of a string': 'throws TypeError',
  'Blob of true': 'throws TypeError',
  'Blob with options 123': 'throws TypeError',
  'Blob with bad endings': 'throws TypeError',
  'Blob of an iterable object': 'ab',
  'File with options null': ['', 'n', 'x'],
  'File with options "abc"': 'throws TypeError',
  'File of 0': 'throws TypeError',
  'Request with CONNECT': 'throws TypeError',
  'Request with trace': 'throws TypeError',
  'Request with a method that is not a token': 'throws TypeError',
  'Request with duplex full': 'throws TypeError',
  'Request with duplex half': 'POST',
  'Request from one whose body stream is locked': 'throws TypeError',
  '... but with a body of its own': 'y',
  "Request FormData body keeps the caller's Content-Type": 'test/only; mime=type',
  "Response FormData body keeps the caller's Content-Type": 'test/only',
  'a request made from another takes its body': [true, 'x', 'TypeError'],
  'a clone leaves the request unread': [false, 'x', 'x'],
  'an object body is its string, as text': ['text/plain;charset=UTF-8', 'hi!'],
  'reading a null body leaves it unused': ['', false, 0, false, null],
  'an empty body is a stream': [true, true, true],
  'a body read whole is then locked': ['TypeError', true, true],
  "a clone's stream gets copies of the chunks": [true, true, true, [0, 0]],
  'Response.json with 204': 'throws TypeError',
  'a stream of strings read whole': 'throws TypeError',
  'a stream of ArrayBuffers read whole': 'throws TypeError',
  'FormData iterated while an entry ahead is deleted': [
    ['foo', 'BAR'],
    '[object FormData Iterator]',
    true,
  ],
  'the abort event, through onabort and listeners': [
    [
      ['listener', true],
      ['onabort', true, true, 'abort'],
    ],
    'function',
  ],
  'AbortSignal.any fires in order, each already aborted': ['012', [true, true, true, 'AbortError']],
  'encodeInto a view that is not a Uint8Array': 'throws TypeError',
  'a TextDecoderStream fed a string': 'rejects TypeError',
  'TextEncoderStream joins a surrogate pair split across chunks': [[240, 159, 152, 128]],
  'TextEncoderStream ends a lone high surrogate on its own': [[97], [239, 191, 189]],
  'gzip round trip': 'hello hello hello hello',
  'gzip truncated': 'throws TypeError',
  'gzip with a flipped byte in its check': 'throws TypeError',
  'gzip garbage': 'throws TypeError',
  'deflate round trip': 'hello hello hello hello',
  'deflate truncated': 'throws TypeError',
  'deflate with a flipped byte in its check': 'throws TypeError',
  'deflate garbage': 'throws TypeError',
  'deflate-raw round trip': 'hello hello hello hello',
  'deflate-raw truncated': 'throws TypeError',
  'deflate-raw garbage': 'throws TypeError',
  'gzip with trailing bytes': 'throws TypeError',
  'deflate with trailing bytes': 'throws TypeError',
};

/**
 * Where Node 20 answers otherwise (WPT fails it there too): its Headers read a record's
 * non-enumerable keys and its iterators are not on %IteratorPrototype%; an onabort handler sees
 * another currentTarget; AbortSignal.any's dependents are not yet aborted when the first event
 * fires (fixed in Node 24); a clone's stream shares the original's chunks; its DecompressionStream
 * errors are plain Errors, and it takes bytes after a zlib stream's end. Leaving `duplex` out with
 * a stream body is allowed here, as workerd allows it (Node refuses), so Workers code that omits it
 * runs; that case is not in CASES.
 */
const NODE_DEPARTS = [
  'Headers of a record, own enumerable keys in order',
  'Headers iterators',
  'the abort event, through onabort and listeners',
  'AbortSignal.any fires in order, each already aborted',
  "a clone's stream gets copies of the chunks",
  ...['gzip', 'deflate', 'deflate-raw'].flatMap((f) => [
    `${f} truncated`,
    `${f} with a flipped byte in its check`,
    `${f} garbage`,
    `${f} with trailing bytes`,
  ]),
];

const pool = new SandboxPool({
  workers: 1,
  limits: { cpuMs: 2000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 5000 },
  hardKillMs: 5000,
});

test('the sandbox answers as the standards say', async () => {
  const call = jsonCaller<Record<string, unknown>>(
    pool,
    () =>
      `export default { async fetch() { return Response.json(await (async () => { ${CASES} })()); } };`,
  );
  assert.equal(await call('rel_web_idl_rules'), EXPECTED);
});

test('Node answers the same', async () => {
  if (onDeno) return; // the reference is Node's
  const AsyncFunction = (async () => {}).constructor as new (
    body: string,
  ) => () => Promise<unknown>;
  const node = JSON.parse(JSON.stringify(await new AsyncFunction(CASES)()));
  const rest = { ...EXPECTED };
  for (const name of NODE_DEPARTS) {
    delete node[name];
    delete rest[name];
  }
  assert.equal(node, rest);
});

test.after(() => pool.close());
test.run();

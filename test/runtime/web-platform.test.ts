/**
 * The web platform inside the sandbox, as app code meets it: the WinterTC minimum common API's
 * globals, and each group working for real inside a published server module.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gunzipSync, deflateRawSync } from 'node:zlib';
import { callNewApp } from '../_lib/apps.ts';
import { bundleModule } from '../_lib/esbuild.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const key = (await newUser(h)).api_key;

/** Publishes `body` as the inside of `async fetch(request)` (or a whole module that imports packages, bundled) and calls it. */
async function run(
  body: string,
  init: { method?: string; rawBody?: BodyInit; headers?: Record<string, string> } = {},
) {
  return callNewApp(
    h,
    key,
    /^\s*import\b/.test(body)
      ? await bundleModule(body)
      : `export default { async fetch(request) { ${body} } };`,
    init,
  );
}

/** The WinterTC Minimum Common Web Platform API's interfaces and globals (2024 list). */
const WINTERTC = [
  'AbortController',
  'AbortSignal',
  'Blob',
  'ByteLengthQueuingStrategy',
  'CompressionStream',
  'CountQueuingStrategy',
  'Crypto',
  'CryptoKey',
  'DecompressionStream',
  'DOMException',
  'Event',
  'EventTarget',
  'File',
  'FormData',
  'Headers',
  'ReadableByteStreamController',
  'ReadableStream',
  'ReadableStreamBYOBReader',
  'ReadableStreamBYOBRequest',
  'ReadableStreamDefaultController',
  'ReadableStreamDefaultReader',
  'Request',
  'Response',
  'SubtleCrypto',
  'TextDecoder',
  'TextDecoderStream',
  'TextEncoder',
  'TextEncoderStream',
  'TransformStream',
  'TransformStreamDefaultController',
  'URL',
  'URLPattern',
  'URLSearchParams',
  'WebAssembly',
  'WritableStream',
  'WritableStreamDefaultController',
  'WritableStreamDefaultWriter',
  'atob',
  'btoa',
  'console',
  'crypto',
  'fetch',
  'navigator',
  'performance',
  'queueMicrotask',
  'reportError',
  'self',
  'setInterval',
  'setTimeout',
  'clearInterval',
  'clearTimeout',
  'structuredClone',
  'CustomEvent',
];
/** WebAssembly is the one QuickJS cannot give (the divergence the docs name). */
const NOT_YET = ['WebAssembly'];

test('inventory: every WinterTC global is there but WebAssembly', async () => {
  const r = await run(
    `return Response.json(${JSON.stringify(WINTERTC)}.filter((n) => !(n in globalThis)));`,
  );
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, NOT_YET);
});

test('the platform classes and functions carry their own names, as in a browser', async () => {
  const names = WINTERTC.filter(
    (n) =>
      (n !== 'WebAssembly' && /^[A-Z]/.test(n)) ||
      ['fetch', 'atob', 'btoa', 'structuredClone', 'setTimeout', 'queueMicrotask'].includes(n),
  );
  const r = await run(
    `return Response.json(${JSON.stringify(names)}.map((n) => [n, globalThis[n].name]).filter(([n, name]) => n !== name));`,
  );
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, []);
});

test('events: EventTarget listeners, CustomEvent detail, AbortController and AbortSignal.any/abort/timeout', async () => {
  const r = await run(`
    const seen = [];
    const t = new EventTarget();
    t.addEventListener('ping', (e) => seen.push([e.type, e.detail]));
    t.dispatchEvent(new CustomEvent('ping', { detail: 42 }));
    const c = new AbortController();
    const any = AbortSignal.any([c.signal, AbortSignal.timeout(10_000)]);
    any.addEventListener('abort', () => seen.push(['any', any.reason.message]));
    c.abort(new Error('stop'));
    let threw = null;
    try { c.signal.throwIfAborted(); } catch (e) { threw = e.message; }
    const timed = AbortSignal.timeout(5);
    await new Promise((ok) => timed.addEventListener('abort', ok));
    const pre = AbortSignal.abort();
    return Response.json({ seen, aborted: c.signal.aborted, threw, timeout: [timed.reason.name, timed.reason.code], pre: [pre.aborted, pre.reason.name, pre.reason instanceof DOMException] });
  `);
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, {
    seen: [
      ['ping', 42],
      ['any', 'stop'],
    ],
    aborted: true,
    threw: 'stop',
    timeout: ['TimeoutError', 23],
    pre: [true, 'AbortError', true],
  });
});

test('structuredClone follows the HTML algorithm: cycles, Date, Map, Set, RegExp, typed arrays; functions refuse', async () => {
  const r = await run(`
    const m = new Map([['when', new Date(0)]]);
    const root = { m, s: new Set([1, 2]), re: /a+/gi, bytes: new Uint8Array([1, 2, 3]) };
    root.self = root;
    m.set('root', root);
    const c = structuredClone(root);
    let refused = null;
    try { structuredClone({ f() {} }); } catch (e) { refused = e.name || 'Error'; }
    return Response.json({
      distinct: c !== root, cycle: c.self === c, mapCycle: c.m.get('root') === c,
      date: c.m.get('when') instanceof Date && c.m.get('when').getTime() === 0,
      set: [...c.s], re: [c.re.source, c.re.flags], bytes: c.bytes instanceof Uint8Array ? [...c.bytes] : null, refused: refused !== null,
    });
  `);
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, {
    distinct: true,
    cycle: true,
    mapCycle: true,
    date: true,
    set: [1, 2],
    re: ['a+', 'gi'],
    bytes: [1, 2, 3],
    refused: true,
  });
});

test('URLPattern matches and extracts groups; queueMicrotask, self and performance.timeOrigin are there', async () => {
  const r = await run(`
    const p = new URLPattern({ pathname: '/books/:id(\\\\d+)' });
    const order = [];
    queueMicrotask(() => order.push('micro'));
    order.push('sync');
    await null;
    return Response.json({
      match: p.exec('https://example.com/books/42')?.pathname.groups, miss: p.test('https://example.com/books/x'),
      order, self: self === globalThis, origin: typeof performance.timeOrigin,
    });
  `);
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, {
    match: { id: '42' },
    miss: false,
    order: ['sync', 'micro'],
    self: true,
    origin: 'number',
  });
});

test('fetch reads data: URLs in the sandbox, nothing leaves it', async () => {
  const r = await run(`
    const a = await fetch('data:text/plain;base64,aMOpbGxv');
    const b = await fetch('data:,a%20b%E2%82%AC');
    return Response.json({ a: [await a.text(), a.headers.get('content-type')], b: [await b.text(), b.headers.get('content-type')] });
  `);
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, { a: ['héllo', 'text/plain'], b: ['a b€', 'text/plain;charset=US-ASCII'] });
});

test('a global an app assigns replaces the lazy one', async () => {
  const r = await run(`globalThis.URLPattern = 'mine'; return new Response(String(URLPattern));`);
  assert.is(r.text, 'mine');
});

test('a Hono app reads urlencoded and multipart forms (c.req.parseBody) sent by a real client', async () => {
  const app = `import { Hono } from 'hono';
    const app = new Hono();
    app.post('/run', async (c) => {
      const body = await c.req.parseBody({ all: true });
      const out = {};
      for (const [k, v] of Object.entries(body)) out[k] = typeof v === 'string' ? v : Array.isArray(v) ? v.map(String) : { name: v.name, type: v.type, size: v.size, text: await v.text() };
      return c.json(out);
    });
    export default { fetch: (req) => app.fetch(req) };`;
  const urlencoded = await run(app, {
    method: 'POST',
    rawBody: 'a=1&b=h%C3%A9llo&b=2',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.is(urlencoded.status, 200, urlencoded.text);
  assert.equal(urlencoded.json, { a: '1', b: ['héllo', '2'] });
  const form = new FormData();
  form.append('title', 'ünïcode "quoted"');
  form.append('upload', new File(['line one\r\nline two'], 'notes.txt', { type: 'text/plain' }));
  const sent = new Request('http://x/', { method: 'POST', body: form });
  const multipart = await run(app, {
    method: 'POST',
    rawBody: await sent.arrayBuffer(),
    headers: { 'content-type': sent.headers.get('content-type')! },
  });
  assert.is(multipart.status, 200, multipart.text);
  assert.equal(multipart.json, {
    title: 'ünïcode "quoted"',
    upload: { name: 'notes.txt', type: 'text/plain', size: 18, text: 'line one\r\nline two' },
  });
});

test('FormData, Blob and File make bodies both ways; a multipart body the sandbox encodes is one Node parses', async () => {
  const r = await run(`
    const f = new FormData();
    f.append('name', 'x');
    f.append('file', new Blob([new Uint8Array([1, 2, 3])], { type: 'application/octet-stream' }), 'b.bin');
    const back = await new Response(f).formData();
    const blob = await new Response('hello', { headers: { 'content-type': 'text/plain' } }).blob();
    return new Response(f, { headers: { 'x-roundtrip': JSON.stringify([back.get('name'), back.get('file').name, back.get('file').size, blob.type, await blob.slice(1, 3).text(), blob instanceof Blob, back.get('file') instanceof File]) } });
  `);
  assert.is(r.status, 200, r.text);
  assert.equal(JSON.parse(r.headers.get('x-roundtrip')!), [
    'x',
    'b.bin',
    3,
    'text/plain',
    'el',
    true,
    true,
  ]);
  const parsed = await new Response(r.text, {
    headers: { 'content-type': r.headers.get('content-type')! },
  }).formData();
  assert.is(parsed.get('name'), 'x');
  assert.equal([...new Uint8Array(await (parsed.get('file') as File).arrayBuffer())], [1, 2, 3]);
});

test('streams: a ReadableStream answers, TextEncoderStream/TextDecoderStream keep multi-byte characters split across chunks, a BYOB reader reads the request body', async () => {
  const r = await run(
    `const bytes = new TextEncoder().encode('añ€😀z');
     const pieces = [bytes.slice(0, 2), bytes.slice(2, 4), bytes.slice(4, 7), bytes.slice(7)];
     const strings = new ReadableStream({ start(c) { for (const p of pieces) c.enqueue(p); c.close(); } }).pipeThrough(new TextDecoderStream()).getReader();
     let decoded = '';
     for (let r = await strings.read(); !r.done; r = await strings.read()) decoded += r.value;
     const reader = request.body.getReader({ mode: 'byob' });
     const { value } = await reader.read(new Uint8Array(64));
     const echoed = new TextDecoder().decode(value);
     const stream = new ReadableStream({ start(c) { c.enqueue(decoded + '|' + echoed); c.close(); } }).pipeThrough(new TextEncoderStream());
     return new Response(stream, { headers: { 'content-type': 'text/plain' } });`,
    { method: 'POST', rawBody: 'body bytes', headers: { 'content-type': 'text/plain' } },
  );
  assert.is(r.status, 200, r.text);
  assert.is(r.text, 'añ€😀z|body bytes');
});

test("CompressionStream's gzip is what Node's zlib inflates; DecompressionStream opens Node's deflate-raw", async () => {
  const raw = deflateRawSync(Buffer.from('from node '.repeat(50)));
  const r = await run(
    `const input = new TextEncoder().encode('compress me '.repeat(100));
     const gz = await new Response(new Blob([input]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer();
     const opened = await new Response(new Blob([new Uint8Array(${JSON.stringify([...raw])})]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).text();
     return Response.json({ gz: btoa(String.fromCharCode(...new Uint8Array(gz))), opened: opened.slice(0, 20) });`,
  );
  assert.is(r.status, 200, r.text);
  const gz = Buffer.from(r.json.gz, 'base64');
  assert.ok(gz.length < 200, `it compressed (${gz.length} bytes)`);
  assert.is(gunzipSync(gz).toString(), 'compress me '.repeat(100));
  assert.is(r.json.opened, 'from node from node ');
});

test('Intl and the locale methods answer exactly as Node does, for a table of locales', async () => {
  const table = `(L) => ({
    number: (1234567.891).toLocaleString(L),
    big: (12345678901234567890n).toLocaleString(L),
    currency: new Intl.NumberFormat(L, { style: 'currency', currency: 'EUR' }).format(1234.5),
    unit: new Intl.NumberFormat(L, { style: 'unit', unit: 'kilometer-per-hour' }).format(88),
    compact: Intl.NumberFormat(L, { notation: 'compact' }).format(1234567),
    date: new Intl.DateTimeFormat(L, { dateStyle: 'full', timeStyle: 'long', timeZone: 'Asia/Tokyo' }).format(new Date(Date.UTC(2026, 10, 24, 12, 0, 0))),
    dateParts: new Intl.DateTimeFormat(L, { timeZone: 'America/New_York' }).formatToParts(new Date(Date.UTC(2026, 0, 2))).map((p) => p.type),
    toLocale: [new Date(Date.UTC(2026, 0, 2, 3, 4, 5)).toLocaleString(L, { timeZone: 'UTC' }), new Date(0).toLocaleDateString(L, { timeZone: 'UTC' }), new Date(0).toLocaleTimeString(L, { timeZone: 'UTC' })],
    plural: [0, 1, 2, 5].map((n) => new Intl.PluralRules(L).select(n)),
    relative: new Intl.RelativeTimeFormat(L, { numeric: 'auto' }).format(-1, 'day'),
    list: new Intl.ListFormat(L, { type: 'conjunction' }).format(['a', 'b', 'c']),
    sorted: ['ä', 'a', 'z', 'Z', 'é'].sort(new Intl.Collator(L).compare),
    compare: 'a'.localeCompare('B', L, { sensitivity: 'base' }),
    words: [...new Intl.Segmenter(L, { granularity: 'word' }).segment('Hello, world!')].filter((s) => s.isWordLike).map((s) => s.segment),
    region: new Intl.DisplayNames(L, { type: 'region' }).of('JP'),
    resolved: new Intl.NumberFormat(L).resolvedOptions().locale,
  })`;
  const locales = ['en-US', 'de-DE', 'fr-FR', 'ja-JP', 'ar-EG', 'hi-IN', 'pt-BR', 'zh-CN'];
  const r =
    await run(`const f = ${table}; let bad = null; try { new Intl.NumberFormat('en', { style: 'currency' }); } catch (e) { bad = e.constructor.name; }
    return Response.json({ rows: ${JSON.stringify(locales)}.map(f), bad, canonical: Intl.getCanonicalLocales('EN-us') });`);
  assert.is(r.status, 200, r.text);
  const f = new Function(`return ${table}`)() as (l: string) => unknown;
  assert.equal(r.json.rows, JSON.parse(JSON.stringify(locales.map(f))));
  assert.is(r.json.bad, 'TypeError');
  assert.equal(r.json.canonical, ['en-US']);
});

test("atob and btoa: HTML's forgiving base64, InvalidCharacterError DOMExceptions, a TypeError with no argument", async () => {
  const r = await run(`
    const err = (f) => { try { f(); return 'no error'; } catch (e) { return (e instanceof DOMException ? 'DOMException ' : e.constructor.name + ' ') + e.name; } };
    return Response.json({
      ok: [atob(' YW Jj\\n'), atob('YWI='), atob('YWI'), atob('YQ=='), atob(''), btoa('\\u00ff'), atob(undefined === 1 ? '' : 'YWJj')],
      bad: ['YQ=', 'YWI===', 'Y', 'YW\\u00e9', '=YWI', 'YW=I'].map((s) => err(() => atob(s))),
      wide: err(() => btoa('\\u0100')),
      none: [err(() => atob()), err(() => btoa())],
      code: (() => { try { atob('*'); } catch (e) { return e.code; } })(),
    });
  `);
  assert.is(r.status, 200, r.text);
  assert.equal(r.json, {
    ok: ['abc', 'ab', 'ab', 'a', '', '/w==', 'abc'],
    bad: Array(6).fill('DOMException InvalidCharacterError'),
    wide: 'DOMException InvalidCharacterError',
    none: ['TypeError TypeError', 'TypeError TypeError'],
    code: 5,
  });
});

test.after(() => h.close());
test.run();

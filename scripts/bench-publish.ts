/**
 * Publishing speed: a 100-file, 50 MiB bundle over real HTTP to the real server and Postgres,
 * then the same bundle again (unchanged bytes are not sent to Postgres twice), then a
 * republish with one file changed; then 50 MiB of compressible text (JavaScript, 100 files), the
 * worst case for the brotli and gzip variants made at publish, first and unchanged. Last, how long
 * the app's data writes wait while a republish of 50 MiB of new bytes holds the app row (a write
 * takes a share lock on it, which a publish's lock excludes).
 * Prints seconds and MiB/s.  Usage: npm run bench:publish
 */
import { randomBytes } from 'node:crypto';
import { on } from 'node:events';
import { Worker } from 'node:worker_threads';
import { startBenchEnv } from './bench-env.ts';

const env = await startBenchEnv();
const FILES = 100;
const TOTAL = 50 * 1024 * 1024;
const files = Array.from({ length: FILES }, (_, i) => ({
  path: `public/asset-${i}.bin`,
  content_type: 'application/octet-stream',
  content_base64: randomBytes(TOTAL / FILES).toString('base64'),
}));
files[0] = {
  path: 'public/index.html',
  content_type: 'text/html',
  content_base64: randomBytes(TOTAL / FILES).toString('base64'),
};
const body = (fs: typeof files) =>
  JSON.stringify({ app: { name: 'bench' }, runtime: { static_root: 'public' }, files: fs });
const payload = body(files);
const mib = (n: number) => n / 1024 / 1024;

async function put(path: string, data: string): Promise<{ seconds: number; json: any }> {
  const started = performance.now();
  const res = await fetch(env.url + path, {
    method: 'PUT',
    headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
    body: data,
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`publish failed: ${res.status} ${JSON.stringify(json)}`);
  return { seconds: (performance.now() - started) / 1000, json };
}

// 50 MiB of JavaScript-like text: every file is compressed (brotli and gzip) on the first publish only
const WORDS = [
  'function',
  'const',
  'return',
  'let',
  'if',
  'else',
  'for',
  'import',
  'export',
  'await',
  'class',
  'new',
  'this',
  'value',
  'items',
  'render',
];
const textFile = (seed: number) => {
  const parts: string[] = [];
  let size = 0;
  let x = seed + 1;
  while (size < TOTAL / FILES) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const w = `${WORDS[x % WORDS.length]}_${x % 997}${x % 10 === 0 ? ';\n' : ' '}`;
    parts.push(w);
    size += w.length;
  }
  return Buffer.from(parts.join('')).toString('base64');
};
const texts = Array.from({ length: FILES }, (_, i) => ({
  path: `public/chunk-${i}.js`,
  content_type: 'text/javascript',
  content_base64: textFile(i),
}));
const textPayload = body(texts);
// made before the first publish: a pause between requests lets the server close the idle
// connection as the next request reuses it (ECONNRESET)

console.log(
  `bundle: ${FILES} files, ${mib(TOTAL).toFixed(0)} MiB decoded, ${mib(payload.length).toFixed(1)} MiB of JSON`,
);
const first = await put('/v0/apps', payload);
const appId = first.json.app_id;
const rows: [string, number][] = [['first publish', first.seconds]];
for (let i = 1; i <= 3; i++)
  rows.push([`unchanged republish #${i}`, (await put(`/v0/apps/${appId}`, payload)).seconds]);
const changed = [...files];
changed[1] = { ...changed[1]!, content_base64: randomBytes(TOTAL / FILES).toString('base64') };
rows.push(['republish, 1 file changed', (await put(`/v0/apps/${appId}`, body(changed))).seconds]);
const textFirst = await put('/v0/apps', textPayload);
rows.push(['text: first publish', textFirst.seconds]);
rows.push([
  'text: unchanged republish',
  (await put(`/v0/apps/${textFirst.json.app_id}`, textPayload)).seconds,
]);
for (const [label, s] of rows)
  console.log(`${label.padEnd(28)} ${s.toFixed(2)} s   ${(mib(TOTAL) / s).toFixed(1)} MiB/s`);
// The app row's share lock, as every data write takes it first, tried again and again during a
// republish, from a thread of its own: the server's parsing and hashing on this thread would
// otherwise count as waiting.
const fresh = files.map((f) => ({
  ...f,
  content_base64: randomBytes(TOTAL / FILES).toString('base64'),
}));
const writer = new Worker(
  `const { parentPort, workerData } = require('node:worker_threads');
   const pg = require('pg');
   (async () => {
     const client = new pg.Client(workerData.url);
     await client.connect();
     const waits = [];
     let publishing = true;
     parentPort.on('message', () => { publishing = false; });
     parentPort.postMessage('ready');
     while (publishing) {
       const t = performance.now();
       await client.query('begin');
       await client.query('select id from apps where id = $1 for key share', [workerData.appId]);
       await client.query('commit');
       waits.push(performance.now() - t);
       await new Promise((r) => setImmediate(r));
     }
     await client.end();
     parentPort.postMessage(waits);
   })();`,
  { eval: true, workerData: { url: env.deps.config.databaseUrl, appId } },
);
const messages = on(writer, 'message');
await messages.next(); // ready
const republished = await put(`/v0/apps/${appId}`, body(fresh));
writer.postMessage('stop');
const waits: number[] = (await messages.next()).value[0];
await writer.terminate();
console.log(
  `republish, every file new     ${republished.seconds.toFixed(2)} s; a data write waited at most ${Math.max(...waits).toFixed(0)} ms (${waits.length} tries)`,
);
await env.close();

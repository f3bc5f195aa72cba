/**
 * `npm run bench:uploads [-- --mb 16 --uploads 12 --concurrency 1]`: what large file uploads from app
 * code cost everyone else. One app's handler makes N bytes in its sandbox and stores them with
 * `ctx.files.store(...).createUpload` (a few at once); meanwhile another app's static page is
 * requested one at a time. Prints the uploads' time, the bystander's latency (p50, p99, max) alone
 * and during the uploads, and the service's main-thread event-loop delay (max and p99) during them,
 * which is how long every other request could not even start.
 */
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { percentile } from './_lib/stats.ts';
import { startBenchEnv } from './bench-env.ts';
import { hostRequester } from './_lib/host-request.ts';

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '16' },
    uploads: { type: 'string', default: '12' },
    concurrency: { type: 'string', default: '1' },
  },
});
const MB = Number(values.mb);
const UPLOADS = Number(values.uploads);
const CONCURRENCY = Number(values.concurrency);

const env = await startBenchEnv();
const agent = new http.Agent({ keepAlive: true });
const request = hostRequester(env.port, env.apiKey, agent);
const b64 = (s: string) => Buffer.from(s).toString('base64');
async function publish(
  name: string,
  files: { path: string; content_type: string; text: string }[],
  extra: object = {},
): Promise<string> {
  const body = JSON.stringify({
    app: { name },
    ...extra,
    files: files.map((f) => ({
      path: f.path,
      content_type: f.content_type,
      content_base64: b64(f.text),
    })),
  });
  const r = await request('PUT', '/v0/apps', 'api.localhost', body);
  if (r.status !== 200) throw new Error(`publish ${name}: ${r.status} ${r.text}`);
  return `${JSON.parse(r.text).app_id}.apps.localhost`;
}

const uploader = await publish(
  'uploader',
  [
    { path: 'public/index.html', content_type: 'text/html', text: 'uploader' },
    {
      path: 'server.js',
      content_type: 'text/javascript',
      text: `export default { async fetch(req, ctx) {
        const n = Number(new URL(req.url).searchParams.get('bytes'));
        const bytes = new Uint8Array(n);
        for (let i = 0; i < n; i += 4096) bytes[i] = i & 255; // distinct content each time: no deduplication
        bytes[0] = Math.random() * 256; bytes[1] = Math.random() * 256; bytes[2] = Math.random() * 256;
        const f = await ctx.files.store('big').createUpload(bytes, { filename: 'big.bin', content_type: 'application/octet-stream' });
        return Response.json({ size: f.size });
      } };`,
    },
  ],
  {
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    resources: { files: { stores: { big: { max_file_size_bytes: 64 * 1024 * 1024 } } } },
  },
);
const bystander = await publish(
  'bystander',
  [{ path: 'public/index.html', content_type: 'text/html', text: '<h1>hello</h1>' }],
  { runtime: { static_root: 'public' } },
);

async function bystanderLoop(until: () => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!until()) {
    const t0 = performance.now();
    const r = await request('GET', '/', bystander);
    if (r.status !== 200) throw new Error(`bystander: ${r.status}`);
    times.push(performance.now() - t0);
    await new Promise((res) => setTimeout(res, 2));
  }
  return times;
}

const bytes = Math.round(MB * 1024 * 1024);
// warm both apps (and check the upload works)
const first = await request('POST', `/upload?bytes=1024`, uploader);
if (first.status !== 200) throw new Error(`upload: ${first.status} ${first.text}`);
let stop = performance.now() + 2000;
const alone = await bystanderLoop(() => performance.now() > stop);

const loop = monitorEventLoopDelay({ resolution: 5 });
let done = false;
let next = 0;
const uploadTimes: number[] = [];
loop.enable();
const t0 = performance.now();
const uploads = Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < UPLOADS) {
      next++;
      const u0 = performance.now();
      const r = await request('POST', `/upload?bytes=${bytes}`, uploader);
      if (r.status !== 200) throw new Error(`upload: ${r.status} ${r.text}`);
      uploadTimes.push(performance.now() - u0);
    }
  }),
).finally(() => (done = true));
const during = await bystanderLoop(() => done);
await uploads;
const seconds = (performance.now() - t0) / 1000;
loop.disable();

const ms = (n: number) => n.toFixed(1).padStart(8);
console.log(
  `${UPLOADS} uploads of ${MB} MB from app code, ${CONCURRENCY} at a time: ${seconds.toFixed(1)} s (${((UPLOADS * MB) / seconds).toFixed(0)} MB/s), each p50 ${percentile(uploadTimes, 50).toFixed(0)} ms`,
);
console.log(
  `\n${"another app's static page".padEnd(30)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'requests'.padStart(9)}`,
);
console.log(
  `${'alone'.padEnd(30)} ${ms(percentile(alone, 50))} ${ms(percentile(alone, 99))} ${ms(Math.max(...alone))} ${String(alone.length).padStart(9)}`,
);
console.log(
  `${'during the uploads'.padEnd(30)} ${ms(percentile(during, 50))} ${ms(percentile(during, 99))} ${ms(Math.max(...during))} ${String(during.length).padStart(9)}`,
);
console.log(
  `\nmain thread's event-loop delay during the uploads: p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms`,
);
stop = 0;
await env.close();
agent.destroy();

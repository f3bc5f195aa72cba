/**
 * The first request after a publish on a node that did not publish it: a cold start there (the
 * release's modules loaded into a new instance), with the module bytecode the publish stored
 * (src/releases/bytecode.ts) and without it (its row removed, so the source is compiled), in
 * interleaved rounds, for a small handler and a bundle of real packages of about 1 MB (hono, marked,
 * zod, jose, valibot, ajv, smol-toml, tldts; esbuild, minified). Also the publish's own time.
 * `--bundle <file>` adds a server bundle of your own (OpenNext's `.platform/build/server.js`, say),
 * whose answer's status is not checked (its first request may fail for its own reasons).
 *   npm run bench:cold-start [-- --rounds 9] [--bundle file.js]
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { publishServerApp, startBenchEnv, startSiblingServer } from './bench-env.ts';
import { hostRequester } from './_lib/host-request.ts';
import { settle } from './_lib/proc-cpu.ts';
import { median } from './_lib/stats.ts';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '9' }, bundle: { type: 'string' } },
});
const ROUNDS = Number(values.rounds);

const BIG_ENTRY = `import { Hono } from 'hono';
import { marked } from 'marked';
import * as z from 'zod';
import * as jose from 'jose';
import * as v from 'valibot';
import Ajv from 'ajv';
import * as TOML from 'smol-toml';
import { parse as parseDomain } from 'tldts';
const parts = [z, jose, v, TOML, parseDomain, Ajv, marked];
const app = new Hono();
app.get('*', (c) => c.text('parts ' + parts.length + ' ' + marked.parse('**cold**').trim()));
export default app;`;

async function bigBundle(): Promise<string> {
  const out = await build({
    stdin: { contents: BIG_ENTRY, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['worker', 'browser'],
    minify: true,
    logLevel: 'error',
  });
  return out.outputFiles[0]!.text;
}

const SMALL = `export default { fetch(request) { return new Response('small ' + new URL(request.url).pathname); } };`;

const env = await startBenchEnv();
const nodeB = await startSiblingServer(env, {});
const portB = Number(new URL(nodeB.url).port);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const onB = hostRequester(portB, env.apiKey, agent);
const time = async <T>(fn: () => Promise<T>): Promise<[number, T]> => {
  const t = performance.now();
  const r = await fn();
  return [performance.now() - t, r];
};

const bundles = [
  { name: 'small handler', source: SMALL, checked: true },
  { name: 'real packages', source: await bigBundle(), checked: true },
  ...(values.bundle
    ? [{ name: values.bundle, source: await readFile(values.bundle, 'utf8'), checked: false }]
    : []),
];
const apps = new Map<string, string>();
const figures = new Map<string, { publish: number[]; first: number[] }>();
const row = (key: string) => {
  let f = figures.get(key);
  if (!f) figures.set(key, (f = { publish: [], first: [] }));
  return f;
};

for (let round = 0; round < ROUNDS; round++) {
  for (const b of bundles) {
    // the order alternates, so neither mode always runs first after a publish
    const modes = round % 2 ? (['source', 'bytecode'] as const) : (['bytecode', 'source'] as const);
    for (const mode of modes) {
      const [publishMs, pub] = await time(() =>
        publishServerApp(env, b.source, { name: `cold ${b.name}`, appId: apps.get(b.name) }),
      );
      apps.set(b.name, pub.app_id);
      if (mode === 'source')
        await env.deps.db
          .deleteFrom('release_bytecode')
          .where('release_id', '=', pub.release_id)
          .execute();
      // both nodes idle (the publish's check and spare instances done), as a cold start mostly finds them
      await settle();
      const [firstMs, res] = await time(() => onB('GET', '/x', pub.host));
      if (b.checked && res.status !== 200)
        throw new Error(`${b.name}: ${res.status} ${res.text.slice(0, 200)}`);
      const f = row(`${b.name}|${mode}`);
      f.publish.push(publishMs);
      f.first.push(firstMs);
    }
  }
}

const packRows = await env.deps.db
  .selectFrom('release_bytecode')
  .select(['bytes', (eb) => eb.fn<number>('octet_length', ['pack']).as('stored')])
  .execute();
console.log(
  `\nFirst request on another node after a publish (ms, median of ${ROUNDS} interleaved rounds)\n`,
);
console.log('| bundle | source bytes | cold start from | first request | publish |');
console.log('| --- | ---: | --- | ---: | ---: |');
for (const b of bundles)
  for (const mode of ['source', 'bytecode'] as const) {
    const f = row(`${b.name}|${mode}`);
    console.log(
      `| ${b.name} | ${b.source.length} | ${mode} | ${median(f.first).toFixed(1)} | ${median(f.publish).toFixed(0)} |`,
    );
  }
const biggest = packRows.reduce((m, r) => (r.bytes > m.bytes ? r : m), packRows[0]!);
console.log(`\nlargest pack: ${biggest.bytes} bytes, ${biggest.stored} stored (brotli)`);
agent.destroy();
await nodeB.close();
await env.close();

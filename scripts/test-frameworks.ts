/**
 * Framework apps, published unchanged: each app of the corpus (scripts/_lib/frameworks-corpus.ts) is
 * made by its own create tool, built by its own build, served by its own `wrangler dev` as the
 * control, and published with `platform publish` in the same folder to a real service (`npm start`
 * on its own embedded Postgres). The same requests go to both, one page is opened in Chromium on
 * both, and a table prints what differs. Needs the npm registry and a few minutes; not in `.ci/run`.
 *   npm run test:frameworks [-- --only sveltekit] [--update-locks]
 */
import { execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { freePort } from '../src/lib/ports.ts';
import { launchChromium } from '../test/_lib/browser.ts';
import { FRAMEWORK_APPS, type FrameworkApp } from './_lib/frameworks-corpus.ts';
import {
  ask,
  differences,
  installTools,
  makeApp,
  ROOT,
  type Running,
  sh,
  wranglerDev,
} from './_lib/frameworks-steps.ts';
import { median } from './_lib/stats.ts';

const { values } = parseArgs({
  options: { only: { type: 'string' }, 'update-locks': { type: 'boolean', default: false } },
});
const apps = FRAMEWORK_APPS.filter((a) => !values.only || values.only.split(',').includes(a.name));
const CLI = path.resolve('src/cli/bin.mjs');

/** The subject: the whole service as `npm start` runs it, on a data dir of its own. */
async function startPlatform(): Promise<Running & { key: string }> {
  const dataDir = path.join(ROOT, 'platform');
  await rm(dataDir, { recursive: true, force: true });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_PG_PORT: String(await freePort()),
    PORT: String(port),
  };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['src/start.mjs'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  for (const started = Date.now(); !out.includes('platform is running'); ) {
    if (child.exitCode !== null || Date.now() - started > 120_000)
      throw new Error(`the platform did not start:\n${out.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const made = await promisify(execFile)(
    process.execPath,
    ['src/lib/run-typescript.mjs', 'scripts/admin.ts', 'create-user', '--email', 'fw@example.com'],
    { env: { ...env, PLATFORM_LOG_LEVEL: 'silent' } },
  );
  const key = JSON.parse(made.stdout.trim().split('\n').pop()!).api_key as string;
  return { port, child, key, output: () => out, stop: () => child.kill('SIGTERM') };
}

type Row = {
  app: string;
  unchanged: string;
  probes: number;
  differing: string[];
  first: [number, number];
  warm: [number, number];
};

async function warm(port: number, host: string, page: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) times.push((await ask(port, host, { name: 'warm', path: page })).ms);
  return median(times);
}

async function compareApp(
  app: FrameworkApp,
  platform: Running & { key: string },
  browser: Awaited<ReturnType<typeof launchChromium>>,
): Promise<Row> {
  const row: Row = {
    app: app.name,
    unchanged: 'no',
    probes: app.probes.length + 1,
    differing: [],
    first: [Number.NaN, Number.NaN],
    warm: [Number.NaN, Number.NaN],
  };
  const dir = await makeApp(app, values['update-locks']!);
  const control = await wranglerDev(dir, await freePort());
  try {
    const controlHost = `127.0.0.1:${control.port}`;
    row.first[0] = (await ask(control.port, controlHost, { name: 'first', path: app.page })).ms;
    let published: string;
    try {
      published = await sh(`node ${CLI} publish`, dir, {
        ...process.env,
        PLATFORM_API_URL: `http://localhost:${platform.port}`,
        PLATFORM_API_KEY: platform.key,
      });
    } catch (err) {
      row.differing.push(`publish failed: ${String((err as Error).message).slice(-600)}`);
      return row;
    }
    row.unchanged = 'yes';
    const host = /http:\/\/([a-z0-9]+\.apps\.localhost:\d+)/.exec(published)![1]!;
    row.first[1] = (await ask(platform.port, host, { name: 'first', path: app.page })).ms;
    for (const probe of app.probes) {
      const [a, b] = [
        await ask(control.port, controlHost, probe),
        await ask(platform.port, host, probe),
      ];
      for (const d of differences(probe, a, b, [`http://${controlHost}`, `http://${host}`]))
        row.differing.push(`${probe.name} (${probe.method ?? 'GET'} ${probe.path}): ${d}`);
    }
    const texts: string[] = [];
    for (const url of [`http://${controlHost}${app.page}`, `http://${host}${app.page}`]) {
      const page = await browser.newPage();
      await page.goto(url, { waitUntil: 'networkidle' });
      texts.push(await page.innerText('body'));
      await page.close();
    }
    if (texts[0] !== texts[1])
      row.differing.push(
        `Chromium, ${app.page}: visible text differs: ${JSON.stringify(texts[1]!.slice(0, 200))}`,
      );
    for (let round = 0; round < 2; round++) {
      row.warm[0] = await warm(control.port, controlHost, app.page);
      row.warm[1] = await warm(platform.port, host, app.page);
    }
    return row;
  } finally {
    control.stop();
  }
}

await installTools();
const platform = await startPlatform();
const browser = await launchChromium();
const rows: Row[] = [];
try {
  for (const app of apps) {
    process.stdout.write(`${app.label}: making, building, comparing…\n`);
    rows.push(
      await compareApp(app, platform, browser).catch((err) => ({
        app: app.name,
        unchanged: 'no',
        probes: app.probes.length + 1,
        differing: [`not compared: ${String(err.message ?? err).slice(0, 800)}`],
        first: [Number.NaN, Number.NaN] as [number, number],
        warm: [Number.NaN, Number.NaN] as [number, number],
      })),
    );
  }
} finally {
  await browser.close();
  platform.stop();
}

const ms = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(1));
console.log(
  '\n| app | published unchanged | requests equal | first request, wrangler dev / platform (ms) | warm median (ms) |',
);
console.log('| --- | --- | --- | ---: | ---: |');
for (const r of rows)
  console.log(
    `| ${r.app} | ${r.unchanged} | ${r.unchanged === 'yes' ? `${r.probes - Math.min(r.probes, r.differing.length)} of ${r.probes}` : 'not compared'} | ${ms(r.first[0])} / ${ms(r.first[1])} | ${ms(r.warm[0])} / ${ms(r.warm[1])} |`,
  );
for (const r of rows)
  if (r.differing.length)
    console.log(`\n${r.app}:\n${r.differing.map((d) => `  - ${d}`).join('\n')}`);
process.exitCode = rows.every((r) => r.unchanged === 'yes' && !r.differing.length) ? 0 : 1;

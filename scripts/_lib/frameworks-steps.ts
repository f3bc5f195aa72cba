/**
 * The steps of `npm run test:frameworks`: make an app with its pinned create tool, install it from
 * its committed lockfile, build it, start its `wrangler dev`, and ask both sides the same request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { FrameworkApp, Probe } from './frameworks-corpus.ts';

export const ROOT = path.resolve('.data/frameworks');
export const TOOLS = path.join(ROOT, 'tools');
export const APPS = path.join(ROOT, 'apps');
const COMMITTED = path.resolve('test/frameworks');
/**
 * Create tools write today's date; the workerd the lockfiles pin knows dates up to its release, so
 * a later one would stop the control from starting. Both sides get the same config.
 */
const COMPATIBILITY_DATE = '2026-10-06';

/** What every command here runs with: the tools' Node 24 and create tools first on the PATH. */
export function toolEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${path.join(TOOLS, 'node_modules/.bin')}:${process.env.PATH}`,
    // create-cloudflare hands over to the create tool it pins (`npx create-vite@9.2.1`)
    npm_config_yes: 'true',
    WRANGLER_SEND_METRICS: 'false',
    CREATE_CLOUDFLARE_TELEMETRY_DISABLED: '1',
    SV_TELEMETRY_DISABLED: '1',
    NEXT_TELEMETRY_DISABLED: '1',
    // next/font/google's build-time fetch, answered locally (the file says why)
    NEXT_FONT_GOOGLE_MOCKED_RESPONSES: path.join(COMMITTED, 'google-fonts-offline.cjs'),
    CI: '1',
  };
}

/** Runs a shell command to its end; throws with its output's tail when it fails. */
export function sh(command: string, cwd: string, env = toolEnv()): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`\`${command}\` in ${cwd} exited ${code}:\n${out.slice(-3000)}`)),
    );
  });
}

export async function installTools(): Promise<void> {
  await mkdir(TOOLS, { recursive: true });
  const lock = await readFile(path.join(COMMITTED, 'tools/package-lock.json'), 'utf8');
  const installed = path.join(TOOLS, 'package-lock.json');
  if (existsSync(installed) && (await readFile(installed, 'utf8')) === lock) return;
  for (const f of ['package.json', 'package-lock.json'])
    await copyFile(path.join(COMMITTED, 'tools', f), path.join(TOOLS, f));
  await sh('npm ci --no-audit --no-fund', TOOLS, process.env);
}

/** Makes the app afresh and installs it: from its committed lockfile, or writes that lockfile. */
export async function makeApp(app: FrameworkApp, updateLock: boolean): Promise<string> {
  const dir = path.join(APPS, app.name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(APPS, { recursive: true });
  await sh(app.create.map((a) => (a === '{dir}' ? app.name : a)).join(' '), APPS);
  for (const step of app.setup ?? []) await sh(step, dir);
  await pinCompatibilityDate(dir);
  const lock = path.join(COMMITTED, 'locks', `${app.name}.package-lock.json`);
  if (existsSync(lock) && !updateLock) {
    await copyFile(lock, path.join(dir, 'package-lock.json'));
    await pinToLock(dir);
    await rm(path.join(dir, 'node_modules'), { recursive: true, force: true });
    await sh('npm ci --no-audit --no-fund', dir);
  } else {
    // no download addresses in a committed lockfile, whatever this machine's npm config says
    await sh('npm install --no-audit --no-fund --omit-lockfile-registry-resolved', dir);
    await mkdir(path.dirname(lock), { recursive: true });
    await copyFile(path.join(dir, 'package-lock.json'), lock);
  }
  for (const step of app.build) await sh(step, dir);
  // an adapter's setup step may write the config afresh
  await pinCompatibilityDate(dir);
  return dir;
}

/**
 * A create tool may write today's newest versions into package.json (create-cloudflare asks for the
 * latest wrangler): the ranges the committed lock was made from replace them, so `npm ci` installs
 * what the lock pins and the corpus does not drift from one day to the next.
 */
async function pinToLock(dir: string): Promise<void> {
  type Deps = Record<string, string>;
  type Manifest = { dependencies?: Deps; devDependencies?: Deps };
  const file = path.join(dir, 'package.json');
  const manifest = JSON.parse(await readFile(file, 'utf8')) as Manifest;
  const lock = JSON.parse(await readFile(path.join(dir, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, Manifest>;
  };
  const root = lock.packages[''] ?? {};
  for (const field of ['dependencies', 'devDependencies'] as const) {
    if (root[field]) manifest[field] = { ...root[field] };
    else delete manifest[field];
  }
  await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

async function pinCompatibilityDate(dir: string): Promise<void> {
  for (const config of ['wrangler.jsonc', 'wrangler.json', 'wrangler.toml']) {
    const file = path.join(dir, config);
    if (!existsSync(file)) continue;
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text.replace(
        /("?compatibility_date"?\s*[:=]\s*")(\d{4}-\d{2}-\d{2})"/,
        (_, head: string, date: string) =>
          `${head}${date > COMPATIBILITY_DATE ? COMPATIBILITY_DATE : date}"`,
      ),
    );
  }
}

export type Running = { port: number; child: ChildProcess; output: () => string; stop(): void };

/** The control: the app's own `wrangler dev`, ready once it answers. */
export async function wranglerDev(dir: string, port: number): Promise<Running> {
  const child = spawn(
    'bash',
    [
      '-c',
      `exec npx wrangler dev --port ${port} --ip 127.0.0.1 --show-interactive-dev-session=false`,
    ],
    { cwd: dir, env: toolEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {}
  };
  for (const started = Date.now(); Date.now() - started < 120_000; ) {
    if (child.exitCode !== null) break;
    if (
      await ask(port, `127.0.0.1:${port}`, { name: 'ready', path: '/' }).then(
        () => true,
        () => false,
      )
    )
      return { port, child, output: () => out, stop };
    await new Promise((r) => setTimeout(r, 250));
  }
  stop();
  throw new Error(`wrangler dev did not answer:\n${out.slice(-3000)}`);
}

export type Answer = {
  status: number;
  type: string;
  location: string;
  body: string;
  ms: number;
};

/** One request on the wire with a chosen Host; nothing followed, nothing decompressed. */
export function ask(port: number, host: string, probe: Probe): Promise<Answer> {
  const headers: Record<string, string> = {
    host,
    'accept-encoding': 'identity',
    ...probe.headers,
  };
  if (probe.sameOrigin) headers.origin = `http://${host}`;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: probe.method ?? 'GET', path: probe.path, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type'] ?? ''),
            location: String(res.headers.location ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', reject);
    req.end(probe.body);
  });
}

/** What differs between the two answers, in words; empty when they match. */
export function differences(
  probe: Probe,
  control: Answer,
  subject: Answer,
  origins: [string, string],
): string[] {
  const same = (text: string, origin: string) => text.replaceAll(origin, 'ORIGIN');
  const found: string[] = [];
  if (control.status !== subject.status) found.push(`status ${control.status} ≠ ${subject.status}`);
  if (control.type.split(';')[0] !== subject.type.split(';')[0])
    found.push(`content-type ${control.type || '(none)'} ≠ ${subject.type || '(none)'}`);
  if (same(control.location, origins[0]) !== same(subject.location, origins[1]))
    found.push(`location ${control.location || '(none)'} ≠ ${subject.location || '(none)'}`);
  if (
    (probe.compare ?? 'exact') === 'exact' &&
    same(control.body, origins[0]) !== same(subject.body, origins[1])
  )
    found.push(
      `body (${control.body.length} ≠ ${subject.body.length} chars): ${JSON.stringify(subject.body.slice(0, 160))}`,
    );
  return found;
}

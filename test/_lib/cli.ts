/** Running the real CLI (`src/cli/bin.mjs`) as a subprocess, and writing app folders for it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

export const BIN = path.resolve('src/cli/bin.mjs');
export type Run = { code: number; stdout: string; stderr: string };
export type CliOptions = { cwd?: string; env?: Record<string, string | undefined>; stdin?: string };

/** A CLI bound to a server and a key, working in `work`. */
export function cliFor(target: { url: string; key: string; work: string }) {
  const envOf = (extra: Record<string, string | undefined> = {}) => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      PLATFORM_API_URL: target.url,
      PLATFORM_API_KEY: target.key,
      XDG_CONFIG_HOME: path.join(target.work, 'config'),
      NO_COLOR: '1',
      ...extra,
    };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    return env as NodeJS.ProcessEnv;
  };
  function cli(args: string[], opts: CliOptions = {}): Promise<Run> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: opts.cwd ?? target.work,
        env: envOf(opts.env),
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.stdin.end(opts.stdin ?? '');
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }
  /** A long-running command (`dev`, `events --follow`): its output so far, and a way to wait for a line. */
  function start(args: string[], opts: CliOptions = {}) {
    const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? target.work,
      env: envOf(opts.env),
    });
    const out = { stdout: '', stderr: '' };
    child.stdout!.on('data', (d) => (out.stdout += d));
    child.stderr!.on('data', (d) => (out.stderr += d));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
    );
    async function waitForOutput(
      pattern: RegExp,
      ms = 30_000,
      from = 0,
    ): Promise<RegExpMatchArray> {
      const end = Date.now() + ms;
      for (;;) {
        const m = out.stdout.slice(from).match(pattern);
        if (m) return m;
        if (Date.now() > end)
          throw new Error(
            `timed out waiting for ${pattern}; stdout:\n${out.stdout}\nstderr:\n${out.stderr}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return { child, out, exited, waitForOutput };
  }
  return { cli, start };
}

/** Writes a folder with a manifest and files (replacing what was there). */
export async function writeSite(
  work: string,
  name: string,
  manifest: unknown,
  files: Record<string, string>,
): Promise<string> {
  const dir = path.join(work, name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'manifest.platform.json'), JSON.stringify(manifest));
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), content);
  }
  return dir;
}

/** Links packages this repository has installed into a folder's node_modules, as `npm install` would. */
export async function linkPackages(dir: string, names: string[]): Promise<void> {
  await mkdir(path.join(dir, 'node_modules'), { recursive: true });
  for (const name of names) {
    await mkdir(path.dirname(path.join(dir, 'node_modules', name)), { recursive: true });
    await symlink(path.resolve('node_modules', name), path.join(dir, 'node_modules', name), 'dir');
  }
}

/** A project folder under `work`, exactly as written (no manifest.platform.json unless given). */
export async function writeProject(
  work: string,
  name: string,
  files: Record<string, string>,
): Promise<string> {
  const dir = path.join(work, name);
  await rm(dir, { recursive: true, force: true });
  for (const [p, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, p)), { recursive: true });
    await writeFile(path.join(dir, p), content);
  }
  return dir;
}

/** The app a folder was published to (`.platform/app.json`). */
export const linkedApp = async (dir: string) =>
  JSON.parse(await readFile(path.join(dir, '.platform', 'app.json'), 'utf8')).app_id as string;

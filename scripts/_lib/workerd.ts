/**
 * Cloudflare's workerd (the devDependency `workerd`) serving one ES module on a free loopback port:
 * the control that the same code is compared with, in benchmarks and in the real-apps test.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/lib/ports.ts';

export type Workerd = { url: string; pid: number; stop(): Promise<void> };

/** Starts workerd on `source`; resolves once `probe` answers (any status), or undefined if workerd cannot run here. */
export async function startWorkerd(
  source: string,
  options: { probe?: string; compatibilityDate?: string; flags?: string[] } = {},
): Promise<Workerd | undefined> {
  // the platform package's binary itself: `.bin/workerd` is a Node launcher where the package's
  // install script did not run, and stopping the launcher would leave workerd running
  const bin = createRequire(import.meta.url)('workerd').default as string;
  const dir = await mkdtemp(path.join(tmpdir(), 'workerd-'));
  const port = await freePort();
  await writeFile(path.join(dir, 'worker.js'), source);
  const flags = (options.flags ?? []).map((f) => `"${f}"`).join(', ');
  await writeFile(
    path.join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "${options.compatibilityDate ?? '2024-09-23'}",
  compatibilityFlags = [${flags}],
);
`,
  );
  const child = spawn(bin, ['serve', path.join(dir, 'config.capnp')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.on('error', () => {});
  const kill = () => child.kill();
  process.on('exit', kill);
  const stop = async () => {
    child.kill();
    process.off('exit', kill);
    await rm(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  for (const started = Date.now(); Date.now() - started < 15_000; ) {
    if (child.exitCode !== null) break;
    const up = await fetch(`${url}${options.probe ?? '/'}`).then(
      () => true,
      () => false,
    );
    if (up) return { url, pid: child.pid!, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  return undefined;
}

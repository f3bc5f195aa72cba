/**
 * Deno 2 (from the npm registry, as CI's Deno smoke test runs it; DENO_BIN for another binary)
 * serving a script on a free loopback port with a fresh DENO_DIR: the control for apps written for
 * Deno, with whatever `flags` they need (`--unstable-kv`).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/lib/ports.ts';
import { denoCommand, denoEnv } from '../../scripts/_lib/deno-command.ts';

export type DenoControl = { url: string; stop(): Promise<void> };

export async function startDeno(script: string, flags: string[]): Promise<DenoControl> {
  const dir = await mkdtemp(path.join(tmpdir(), 'deno-control-'));
  const port = await freePort();
  const [cmd, ...pre] = denoCommand();
  const env = denoEnv();
  const child = spawn(cmd!, [...pre, 'run', ...flags, script], {
    env: { ...env, DENO_DIR: path.join(dir, 'deno'), PORT: String(port), NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const kill = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  };
  process.on('exit', kill);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    kill();
    process.off('exit', kill);
    await rm(dir, { recursive: true, force: true });
  };
  for (const started = Date.now(); Date.now() - started < 120_000; ) {
    if (child.exitCode !== null) break;
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return { url, stop };
    await new Promise((r) => setTimeout(r, 200));
  }
  await stop();
  throw new Error(`deno did not start: ${stderr.slice(0, 2000)}`);
}

/**
 * A service killed outright (SIGKILL to its process group) restarts at once on the same data dir,
 * every time: the dead owner is never mistaken for a live one, even while it is a zombie nobody
 * reaps (its parent here is a process that never waits, as a container whose PID 1 is not an init
 * reaper leaves it), and a live owner is always found. On Deno (the suite's Deno run) the service
 * runs on Deno.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../../src/lib/ports.ts';
import { killProcessesOf, START } from '../_lib/processes.ts';

const dataDir = path.resolve('.data', 'test-scratch', `restart-${process.pid}`);
/**
 * This data dir's Postgres port: another test file starting a service of its own at the same moment
 * would otherwise find the default port free too, and one of the two would fail to start on it.
 */
const pgPort = await freePort();
const parents: ChildProcess[] = [];

/**
 * Starts the service under a parent that never reaps it (bash exec'ing into sleep), in a session of
 * its own; resolves with its pid once it is up, or with its output when it exits first.
 */
async function start(): Promise<{ pid: number; output: () => string; up: boolean }> {
  const port = await freePort();
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PLATFORM_DATA_DIR: dataDir,
    PORT: String(port),
    PLATFORM_PG_PORT: String(pgPort),
    PLATFORM_LOG_LEVEL: 'info',
  };
  delete env.DATABASE_URL;
  delete env.TEST_DATABASE_URL;
  const parent = spawn(
    'bash',
    ['-c', `setsid ${START.shell} </dev/null & echo "pid=$!"; exec sleep 600`],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  parents.push(parent);
  let out = '';
  parent.stdout!.on('data', (d) => (out += d));
  parent.stderr!.on('data', (d) => (out += d));
  const started = Date.now();
  for (;;) {
    const pid = Number(/pid=(\d+)/.exec(out)?.[1]);
    if (out.includes('platform is running')) return { pid, output: () => out, up: true };
    const alive = pid ? processState(pid) : 'R';
    if (alive === 'gone' || alive === 'Z' || Date.now() - started > 90_000) {
      // what it wrote before exiting may still be in the pipe: read until nothing more arrives
      for (let seen = -1, i = 0; seen !== out.length && i < 40; i++) {
        seen = out.length;
        await new Promise((r) => setTimeout(r, 100));
      }
      return { pid, output: () => out, up: false };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The process's state letter from /proc (`Z` for a zombie), or `gone`. */
function processState(pid: number): string {
  try {
    return /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!;
  } catch {
    return 'gone';
  }
}

test('SIGKILL to the service group, then start again at once: 20 times in a row it comes up', async () => {
  let zombies = 0;
  for (let i = 0; i < 20; i++) {
    const s = await start();
    assert.ok(s.up, `start ${i + 1} did not come up:\n${s.output()}`);
    if (i > 0) assert.match(s.output(), 'taking it over', 'the cluster left running is taken over');
    process.kill(-s.pid, 'SIGKILL');
    // the killed service stays a zombie: its parent never reaps it
    for (let t = 0; t < 100 && processState(s.pid) !== 'Z'; t++)
      await new Promise((r) => setTimeout(r, 20));
    if (processState(s.pid) === 'Z') zombies++;
  }
  assert.is(zombies, 20, 'each killed service was a zombie when the next one started');
});

test('a live owner is always found: a second start on the data dir is refused, naming its pid', async () => {
  const first = await start();
  assert.ok(first.up, first.output());
  const second = await start();
  assert.not.ok(second.up, 'the second instance must not start');
  assert.match(second.output(), `another platform instance (pid ${first.pid})`);
  process.kill(-first.pid, 'SIGKILL');
});

test.after(async () => {
  killProcessesOf(dataDir);
  for (const p of parents) p.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

process.once('SIGTERM', () => {
  killProcessesOf(dataDir);
  process.exit(1);
});

test.run();

/**
 * A call's CPU budget is CPU time, not wall-clock time: on a host whose cores are busy with other
 * work, a handler well inside its plan's CPU is not cut off for the time it waited for a core, and
 * a handler that loops forever is still stopped. The same holds for the watchdog that terminates a
 * worker stuck in one long native operation.
 *
 * Solo (run after the other files, alone): it keeps one core busy with three programs for seconds,
 * which would slow every file running beside it.
 */
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpuClock } from '../../src/sandbox/cpu-clock.ts';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { invokeSource } from '../_lib/sandbox.ts';

test('the CPU clock is the thread’s own: sleeping does not advance it, working does', () => {
  const clock = cpuClock();
  if (process.platform === 'linux')
    assert.is.not(clock.source, 'wall', 'Linux has a per-thread CPU clock');
  const slept = clock.now();
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
  assert.ok(
    clock.now() - slept < 30,
    `150 ms asleep counted as ${(clock.now() - slept).toFixed(1)} ms of CPU`,
  );
  const worked = clock.now();
  let x = 0;
  while (clock.now() - worked < 20) x += Math.sqrt(x + 1);
  assert.ok(x > 0);
});

/** The first CPU this process may run on: the busy programs and the sandbox share it. */
function firstCpu(): string {
  const allowed = /Cpus_allowed_list:\s*([\d]+)/.exec(readFileSync('/proc/self/status', 'utf8'));
  return allowed?.[1] ?? '0';
}

/**
 * A core the sandbox gets little of: every thread of this process is pinned to one core, and this
 * thread runs at nice 10, which sandbox workers started after it inherit. Three programs that never
 * stop computing at nice 0 then take ~96 % of that core while running (a scheduler's weights, not
 * its luck: a sandbox thread waking up would otherwise often run a short call straight through).
 * Made once, before any test: the programs must start before this thread's priority is lowered.
 */
function slowCore(): { busy(): Promise<void>; idle(): void; end(): void } {
  const cpu = firstCpu();
  execFileSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)], { stdio: 'ignore' });
  const programs = Array.from({ length: 3 }, () =>
    spawn('taskset', ['-c', cpu, process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  for (const p of programs) p.kill('SIGSTOP');
  setPriority(10);
  return {
    async busy() {
      for (const p of programs) p.kill('SIGCONT');
      await new Promise((r) => setTimeout(r, 100));
    },
    idle() {
      for (const p of programs) p.kill('SIGSTOP');
    },
    end() {
      for (const p of programs) p.kill('SIGKILL');
    },
  };
}

const core = process.platform === 'linux' ? slowCore() : undefined;
test.after(() => core?.end());
// stopped by the test runner (its timeout sends SIGTERM): the busy programs must not outlive this file
process.once('SIGTERM', () => {
  core?.end();
  process.exit(1);
});

test('on a busy core, a handler inside its CPU budget answers; one that loops forever is stopped', async () => {
  if (!core) return;
  // CPU time itself grows on a shared core (caches), and each stretch may be billed a tick more: 5x headroom
  const budgetMs = 25;
  const pool = new SandboxPool({
    workers: 1,
    limits: {
      cpuMs: budgetMs,
      ...DEFAULT_INSTANCE_LIMITS,
      wallMs: 20_000,
    },
    hardKillMs: 20_000,
  });
  try {
    await pool.warm();
    const work = (n: number) =>
      `export default { fetch() { let x = 0; for (let i = 0; i < ${n}; i++) x += i % 7; return Response.json({ x }); } };`;
    // a handler of about 5 ms of CPU on this machine, measured while the core is still free
    const probe = await invokeSource(pool, 'probe', work(100_000));
    assert.ok(probe.ok && probe.cpuMs! > 0, JSON.stringify(probe.error));
    const n = Math.max(10_000, Math.round((100_000 * 5) / probe.cpuMs!));

    await core.busy();
    let slowerThanBudget = 0;
    for (let i = 0; i < 8; i++) {
      const started = performance.now();
      const r = await invokeSource(pool, `steady_${i % 3}`, work(n));
      if (performance.now() - started > budgetMs) slowerThanBudget++;
      assert.ok(r.ok, `call ${i}: ${JSON.stringify(r.error)}`);
      assert.ok(r.cpuMs! < budgetMs, `call ${i} billed ${r.cpuMs} ms`);
    }
    // the core really was busy: on the wall clock, most calls took longer than their whole budget
    assert.ok(
      slowerThanBudget >= 5,
      `only ${slowerThanBudget} of 8 calls outlasted ${budgetMs} ms on the wall clock`,
    );

    const loop = await invokeSource(pool, 'loop', 'export default { fetch() { for (;;) {} } };');
    assert.is(loop.ok, false);
    assert.is(loop.error?.kind, 'timeout');
    assert.match(loop.error!.message, `${budgetMs} ms of CPU`);
  } finally {
    core.idle();
    await pool.close();
  }
});

test('on a busy core, the watchdog spares a long native operation inside its CPU limit and still stops a longer one', async () => {
  if (!core) return;
  const hardKillMs = 150;
  // JSON.stringify of a large array is one native operation: QuickJS's interrupt never sees it, only the watchdog does
  const pool = new SandboxPool({
    workers: 1,
    limits: {
      cpuMs: 10_000,
      ...DEFAULT_INSTANCE_LIMITS,
      wallMs: 60_000,
    },
    hardKillMs,
  });
  const stringify = (n: number) =>
    `export default { fetch() { return new Response(String(JSON.stringify(new Array(${n}).fill(1.5)).length)); } };`;
  try {
    await pool.warm();
    const probe = await invokeSource(pool, 'probe', stringify(100_000));
    assert.ok(probe.ok && probe.cpuMs! > 0, JSON.stringify(probe.error));
    const perMs = 100_000 / probe.cpuMs!;
    await core.busy();
    // about 30 ms of CPU: many times that on the wall clock with the core this busy
    const started = performance.now();
    const spared = await invokeSource(pool, 'spared', stringify(Math.round(perMs * 30)));
    const wallMs = performance.now() - started;
    assert.ok(spared.ok, JSON.stringify(spared.error));
    assert.ok(wallMs > hardKillMs, `the core was not busy: the call took ${wallMs.toFixed(0)} ms`);
    // about 600 ms of CPU: past the watchdog's 150 ms however long it waits for the core
    const stopped = await invokeSource(pool, 'stopped', stringify(Math.round(perMs * 600)));
    assert.is(stopped.ok, false);
    assert.is(stopped.error?.kind, 'timeout');
    assert.match(stopped.error!.message, 'without yielding');
  } finally {
    core.idle();
    await pool.close();
  }
});

test.run();

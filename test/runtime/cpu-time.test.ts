/**
 * A call's CPU budget is CPU time, not wall-clock time: on a host whose cores are busy with other
 * work, a handler well inside its plan's CPU is not cut off for the time it waited for a core, and
 * a handler that loops forever is still stopped.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cpuClock } from '../../src/sandbox/cpu-clock.ts';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { invokeSource } from '../_lib/sandbox.ts';

test('the CPU clock is the thread’s own: sleeping does not advance it, working does', () => {
  const clock = cpuClock();
  if (process.platform === 'linux') assert.is.not(clock.source, 'wall', 'Linux has a per-thread CPU clock');
  const slept = clock.now();
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
  assert.ok(clock.now() - slept < 30, `150 ms asleep counted as ${(clock.now() - slept).toFixed(1)} ms of CPU`);
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

test('on a busy core, a handler inside its CPU budget answers; one that loops forever is stopped', async () => {
  if (process.platform !== 'linux') return;
  const cpu = firstCpu();
  // Every thread of this process (the sandbox worker started below inherits it) and five programs
  // that never stop computing share one core: each gets about a sixth of it.
  execFileSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)], { stdio: 'ignore' });
  const busy: ChildProcess[] = [];
  const budgetMs = 25;
  const pool = new SandboxPool({ workers: 1, limits: { cpuMs: budgetMs, memoryBytes: 64 * 1024 * 1024, stackBytes: 512 * 1024, wallMs: 20_000 }, hardKillMs: 20_000 });
  try {
    await pool.warm();
    const work = (n: number) => `export default { fetch() { let x = 0; for (let i = 0; i < ${n}; i++) x += i % 7; return Response.json({ x }); } };`;
    // a handler of about 10 ms of CPU on this machine, measured while the core is still free
    const probe = await invokeSource(pool, 'probe', work(100_000));
    assert.ok(probe.ok && probe.cpuMs! > 0, JSON.stringify(probe.error));
    const n = Math.max(10_000, Math.round((100_000 * 10) / probe.cpuMs!));

    for (let i = 0; i < 5; i++) busy.push(spawn('taskset', ['-c', cpu, process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' }));
    await new Promise((r) => setTimeout(r, 300));
    let slowerThanBudget = 0;
    for (let i = 0; i < 12; i++) {
      const started = performance.now();
      const r = await invokeSource(pool, `steady_${i % 3}`, work(n));
      if (performance.now() - started > budgetMs) slowerThanBudget++;
      assert.ok(r.ok, `call ${i}: ${JSON.stringify(r.error)}`);
      assert.ok(r.cpuMs! < budgetMs, `call ${i} billed ${r.cpuMs} ms`);
    }
    // the core really was shared: on the wall clock, most calls took longer than their whole budget
    assert.ok(slowerThanBudget >= 6, `only ${slowerThanBudget} of 12 calls outlasted ${budgetMs} ms on the wall clock`);

    const loop = await invokeSource(pool, 'loop', 'export default { fetch() { for (;;) {} } };');
    assert.is(loop.ok, false);
    assert.is(loop.error?.kind, 'timeout');
    assert.match(loop.error!.message, `${budgetMs} ms of CPU`);
  } finally {
    for (const b of busy) b.kill('SIGKILL');
    await pool.close();
  }
});

test.run();

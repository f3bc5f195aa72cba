/** CPU time of another process from /proc (user + system, every thread), in milliseconds. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticks: number | undefined;

export function processCpuMs(pid: number): number {
  ticks ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the command name, which is in parentheses and may hold spaces
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks;
}

/** This process's CPU time (every thread), in milliseconds. */
export function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Pins this process and every thread it has and will have to one core (Linux `taskset`); false where it cannot. */
export function pinTo(core: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-cp', String(core), String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits until this process (platform nodes and their sandbox threads) is idle: work still queued
 * from one measurement (requests after wrk stops, a publish's spare instances) would be billed to
 * the next.
 */
export async function settle(): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 60_000; ) {
    const before = ownCpuMs();
    await new Promise((r) => setTimeout(r, 250));
    if (ownCpuMs() - before < 25) return;
  }
  console.warn('the platform did not become idle within 60 s');
}

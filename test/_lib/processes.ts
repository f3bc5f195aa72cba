/** The processes a test started on a data dir, found the way an operator would look (`ps`), for checks that nothing is left. */
import { readdirSync, readFileSync } from 'node:fs';
import { DENO_V8_FLAGS } from '../../scripts/_lib/deno-command.ts';
import { onDeno } from '../../src/lib/on-deno.ts';

/**
 * Every process still running that belongs to `dataDir`: its command line names it (Postgres,
 * `npm run cluster --data-dir …`) or it runs with `PLATFORM_DATA_DIR` set to it (the service, npm).
 * Synchronous, so a signal handler can use it. Lines are `<pid> <command line>`.
 */
export function processesOf(dataDir: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const read = (f: string) => {
      try {
        return readFileSync(`/proc/${pid}/${f}`, 'utf8');
      } catch {
        return '';
      }
    };
    const cmdline = read('cmdline');
    if (
      cmdline.split('\0').some((arg) => arg.includes(dataDir)) ||
      read('environ').split('\0').includes(`PLATFORM_DATA_DIR=${dataDir}`)
    ) {
      found.push(`${pid} ${cmdline.replaceAll('\0', ' ').trim()}`);
    }
  }
  return found;
}

/** SIGKILLs whatever `processesOf(dataDir)` finds: nothing a test started may outlive it. */
export function killProcessesOf(dataDir: string): void {
  for (const line of processesOf(dataDir)) {
    try {
      process.kill(Number(line.split(' ')[0]), 'SIGKILL');
    } catch {}
  }
}

/**
 * The arguments after `node` that `npm run <script>` runs (read from package.json, so a test runs a
 * command as an operator does): `[...npmScriptArgs('migrate'), ...]`.
 */
export function npmScriptArgs(script: string): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [node, ...args] = (pkg.scripts[script] ?? '').split(' ');
  if (node !== 'node')
    throw new Error(`npm run ${script} is not a node command: ${pkg.scripts[script]}`);
  // the suite's Deno run (process.execPath is deno): the same script on Deno, as `deno task` runs it
  if (onDeno)
    return [
      'run',
      '--allow-all',
      ...DENO_V8_FLAGS,
      ...args.filter((a) => !a.endsWith('run-typescript.mjs')),
    ];
  return args;
}

/**
 * How a test starts the whole service as an operator does: `npm start`, or `deno task start` when
 * the suite runs on Deno. `direct` and `shell` start it without the package manager in between.
 */
const direct: [string, string[]] = onDeno
  ? [process.execPath, ['run', '--allow-all', ...DENO_V8_FLAGS, 'src/main.ts']]
  : [process.execPath, ['src/start.mjs']];
export const START: { command: [string, string[]]; direct: [string, string[]]; shell: string } = {
  command: onDeno ? [process.execPath, ['task', 'start']] : ['npm', ['start']],
  direct,
  shell: [direct[0], ...direct[1]].join(' '),
};

/** `npm run admin`'s arguments after `node`: `[...ADMIN_ARGS, 'create-user', ...]`. */
export const ADMIN_ARGS: string[] = npmScriptArgs('admin');

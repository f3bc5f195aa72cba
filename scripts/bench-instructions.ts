/**
 * The cost of a static hit in CPU instructions, which (unlike req/s on a shared 2-core VM, which
 * swings by ±10% between runs) repeats to within about 0.1%. Runs the platform, serving a published
 * static app, and the bare Hono baseline each under valgrind's callgrind; warms each, then counts
 * the instructions its whole process executes (every thread, user space only: kernel time such as
 * writev is not counted) while this process sends N keep-alive requests. Prints instructions per
 * request and the ratio. Needs valgrind (`apt-get install valgrind`).
 *   npm run bench:instructions [-- --requests 5000 --warm 20000]
 * Static hits only: under valgrind QuickJS's WebAssembly memory cannot be reserved.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '5000' },
    warm: { type: 'string', default: '20000' },
    serve: { type: 'string' },
  },
});
const SIZE = 20_000;

if (values.serve === 'platform') {
  // Child mode: the real service in this process, one static app published, port and host on stdout.
  const { startBenchEnv } = await import('./bench-env.ts');
  const env = await startBenchEnv();
  const page = Buffer.from('<!doctype html>' + 'x'.repeat(SIZE - 15)).toString('base64');
  const res = await fetch(`${env.url}/v0/apps`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      app: { name: 'bench' },
      runtime: { static_root: 'public', fallback: '404' },
      files: [{ path: 'public/index.html', content_type: 'text/html', content_base64: page }],
    }),
  });
  const { app_id } = (await res.json()) as { app_id: string };
  process.stdout.write(`${env.port} ${app_id}.apps.localhost\n`);
  const stop = () => void env.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  await main();
}

/** `count` GET / requests over 4 keep-alive connections; rejects on any status but 200. */
async function load(port: number, host: string | undefined, count: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let sent = 0;
  const worker = async (): Promise<void> => {
    while (sent < count) {
      sent++;
      await new Promise<void>((resolve, reject) => {
        http
          .get(
            { host: '127.0.0.1', port, path: '/', agent, headers: host ? { host } : {} },
            (res) => {
              if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
              res.resume();
              res.on('end', resolve);
            },
          )
          .on('error', reject);
      });
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  agent.destroy();
}

/** The instruction total of callgrind's newest dump (`cg.<pid>.<n>`) in dir. */
async function newestTotal(dir: string): Promise<number> {
  const dumps = (await readdir(dir))
    .filter((f) => /^cg\.\d+\.\d+$/.test(f))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
  const newest = dumps.at(-1);
  const m = newest
    ? /^totals:\s+(\d+)/m.exec(await readFile(path.join(dir, newest), 'utf8'))
    : null;
  if (!m) throw new Error('callgrind wrote no counts');
  return Number(m[1]);
}

/** Instructions per request of one server process, started under callgrind with instrumentation off until measured. */
async function measure(
  label: string,
  args: string[],
  requests: number,
  warm: number,
): Promise<{ perRequest: number; windows: number[] }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-instructions-'));
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      '--instr-atstart=no',
      `--callgrind-out-file=${dir}/cg.%p`,
      process.execPath,
      '--import',
      'tsx',
      ...args,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve(out.slice(0, nl));
      });
      child.once('exit', (code) =>
        reject(new Error(`${label} exited with ${code} before listening:\n${stderr.slice(-2000)}`)),
      );
    });
    const [port, host] = line.trim().split(' ');
    await load(Number(port), host, warm);
    // V8 optimises on a background thread, which valgrind runs slowly: count windows of `requests`
    // until two in a row agree within 2%, so what is reported is the optimised code's cost.
    const pid = String(child.pid);
    const windows: number[] = [];
    for (let i = 0; i < 12; i++) {
      await run('callgrind_control', ['-z', pid]);
      await run('callgrind_control', ['-i', 'on', pid]);
      await load(Number(port), host, requests);
      await run('callgrind_control', ['-i', 'off', pid]);
      await run('callgrind_control', ['-d', pid]);
      windows.push((await newestTotal(dir)) / requests);
      const [a, b] = windows.slice(-2);
      if (a !== undefined && b !== undefined && Math.abs(a - b) / b < 0.02)
        return { perRequest: b, windows };
    }
    throw new Error(
      `${label}: counts did not settle: ${windows.map((w) => w.toFixed(0)).join(', ')}`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const hasValgrind = await run('valgrind', ['--version']).then(
    () => true,
    () => false,
  );
  if (!hasValgrind) {
    console.log('valgrind is not installed: apt-get install valgrind');
    process.exit(1);
  }
  const requests = Number(values.requests);
  const warm = Number(values.warm);
  const script = path.relative(process.cwd(), new URL(import.meta.url).pathname);
  const bare = await measure(
    'bare Hono',
    ['scripts/bench-bare-hono.ts', String(SIZE)],
    requests,
    warm,
  );
  const platform = await measure('platform', [script, '--serve', 'platform'], requests, warm);
  console.log(
    `\ninstructions per request (callgrind, user space, whole process; windows of ${requests} requests until two agree within 2%)\n`,
  );
  for (const [label, r] of [
    ['bare Hono, 20 KB from memory', bare],
    ['platform static hit, 20 KB', platform],
  ] as const) {
    console.log(
      label.padEnd(34),
      r.perRequest.toFixed(0).padStart(9),
      `  (windows: ${r.windows.map((w) => w.toFixed(0)).join(', ')})`,
    );
  }
  console.log(
    `\nbare / platform: ${(bare.perRequest / platform.perRequest).toFixed(2)} (kernel time, the same for both, is not in these counts)`,
  );
}

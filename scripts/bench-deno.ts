/**
 * The same service on Node and on Deno, side by side: `npm start` (node src/start.mjs) and `deno
 * task start`, each a real process on its own embedded Postgres, each serving the same published
 * app (a 20 KB index.html and a trivial server handler). Interleaved rounds of load (wrk, or
 * autocannon where wrk is missing) on the static page and on the handler; medians of requests/s,
 * p50 and p99, and Deno's figures as a ratio of Node's.
 *   npm run bench:deno [-- --seconds 3 --rounds 6 --connections 32]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createDb, createPool } from '../src/db/database.ts';
import { freePort } from '../src/lib/ports.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { setPlan } from '../src/plans/operator.ts';
import { createSignals } from '../src/signals.ts';
import { createUser } from '../src/users/service.ts';
import { denoCommand, denoEnv } from './_lib/deno-command.ts';
import { load } from './_lib/load.ts';
import { scratchDatabase } from './_lib/scratch-db.ts';
import { median } from './_lib/stats.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '6' },
    connections: { type: 'string', default: '32' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const PAGE = `<!doctype html>${'x'.repeat(20_000 - 15)}`;
const HANDLER = `export default { fetch() { return new Response('hello from the sandbox', { headers: { 'content-type': 'text/plain' } }); } };`;

type Service = {
  name: string;
  url: string;
  host: string;
  child: ChildProcess;
  close(): Promise<void>;
};

async function start(name: 'node' | 'deno', basePort: number): Promise<Service> {
  const scratch = await scratchDatabase(`bench-${name}`, basePort);
  const pool = createPool(scratch.url, 2);
  const db = createDb(pool);
  const user = await createUser(db, { email: `bench-${name}-${process.pid}@example.com` });
  const secretsKey = randomBytes(32).toString('hex');
  const config = loadConfig({ DATABASE_URL: scratch.url, PLATFORM_SECRETS_KEY: secretsKey });
  await setPlan(
    {
      config,
      pool,
      db,
      log: createLogger('warn'),
      secretsKey: Buffer.from(secretsKey, 'hex'),
      signals: createSignals(),
    },
    { accountId: user.account_id, planKey: 'internal' },
  );
  await db.destroy();
  const port = await freePort();
  const [command, ...pre] =
    name === 'node' ? [process.execPath, 'src/start.mjs'] : [...denoCommand(), 'task', 'start'];
  const child = spawn(command!, pre, {
    env: {
      ...(name === 'deno' ? denoEnv() : process.env),
      DATABASE_URL: scratch.url,
      PORT: String(port),
      PLATFORM_SECRETS_KEY: secretsKey,
      PLATFORM_LOG_LEVEL: 'warn',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {}
  };
  process.on('exit', stop);
  for (const t = Date.now(); !out.includes('platform is running'); ) {
    if (child.exitCode !== null || Date.now() - t > 120_000)
      throw new Error(`${name} did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = `http://127.0.0.1:${port}`;
  const file = (path: string, type: string, body: string) => ({
    path,
    content_type: type,
    content_base64: Buffer.from(body).toString('base64'),
  });
  const published = (await (
    await fetch(`${url}/v0/apps`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${user.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        app: { name: 'bench' },
        runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
        files: [
          file('public/index.html', 'text/html', PAGE),
          file('server.js', 'text/javascript', HANDLER),
        ],
      }),
    })
  ).json()) as { app_id?: string };
  if (!published.app_id) throw new Error(`${name}: publish failed ${JSON.stringify(published)}`);
  return {
    name,
    url,
    host: `${published.app_id}.apps.localhost`,
    child,
    async close() {
      stop();
      await new Promise((r) => child.once('exit', r));
      await scratch.close();
    },
  };
}

const services = [await start('node', 46000), await start('deno', 47000)];
try {
  const targets = services.flatMap((s) => [
    {
      label: `${s.name} static hit, 20 KB`,
      run: () =>
        load(
          `${s.name} static`,
          `${s.url}/`,
          { host: s.host },
          { seconds: SECONDS, connections: CONNECTIONS },
        ),
    },
    {
      label: `${s.name} server handler (QuickJS)`,
      run: () =>
        load(
          `${s.name} handler`,
          `${s.url}/api`,
          { host: s.host },
          { seconds: SECONDS, connections: CONNECTIONS },
        ),
    },
  ]);
  // one uncounted short run each, so every path is warm before it is measured
  for (const s of services) {
    await load('warm', `${s.url}/`, { host: s.host }, { seconds: 1, connections: CONNECTIONS });
    await load('warm', `${s.url}/api`, { host: s.host }, { seconds: 1, connections: CONNECTIONS });
  }
  const rounds = targets.map(() => [] as Awaited<ReturnType<typeof load>>[]);
  for (let i = 0; i < ROUNDS; i++) {
    const order = targets.map((_, k) => k);
    if (i % 2 === 1) order.reverse();
    for (const k of order) rounds[k]!.push(await targets[k]!.run());
  }
  const rows = targets.map((t, k) => ({
    label: t.label,
    rps: median(rounds[k]!.map((r) => r.rps)),
    p50: median(rounds[k]!.map((r) => r.p50)),
    p99: median(rounds[k]!.map((r) => r.p99)),
    errors: rounds[k]!.reduce((n, r) => n + r.errors, 0),
  }));
  console.log(
    `\n${ROUNDS} interleaved rounds of ${SECONDS} s, ${CONNECTIONS} connections, medians`,
  );
  console.log('target                              req/s     p50 ms   p99 ms  errors  vs Node');
  for (const [k, r] of rows.entries()) {
    const node = rows[k % 2]!;
    console.log(
      `${r.label.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} ${r.p50.toFixed(2).padStart(9)} ${r.p99.toFixed(2).padStart(8)} ${String(r.errors).padStart(7)}  ${k < 2 ? '' : `${(r.rps / node.rps).toFixed(2)}x`}`,
    );
  }
} finally {
  for (const s of services) await s.close();
}
process.exit(0);

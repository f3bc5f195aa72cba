/**
 * `npm run cluster`: the platform as several machines would run it, on this one: one Postgres
 * (embedded), an S3-protocol server (s3rver) holding release and app files, two API nodes on two
 * ports and two job workers, each a real `src/main.ts` process. Prints their addresses; Ctrl-C stops
 * them all (Postgres last). docs/scaling.md describes the same topology on real machines.
 *
 *   npm run cluster [-- --data-dir .data/cluster --base-port 8801]
 *
 * PLATFORM_* variables in the environment pass through to every process (PLATFORM_WORKER_STALE_SECONDS, ...).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { prepareDatabase } from '../src/boot.ts';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { freePort, portIsFree } from '../src/lib/ports.ts';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string', default: '.data/cluster' },
    'base-port': { type: 'string', default: '8801' },
  },
});
const dataDir = path.resolve(values['data-dir']!);
const basePort = Number(values['base-port']);
await mkdir(dataDir, { recursive: true });
const ROOT = path.resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');

const say = (line: string) => process.stdout.write(line + '\n');
const children: { name: string; child: ChildProcess }[] = [];
let stopping = false;

const pg = await startEmbeddedPostgres({
  dataDir,
  port: await freePort(),
  log: (l) => say(`postgres: ${l}`),
});
const databaseUrl = pg.url('postgres');
await prepareDatabase(databaseUrl);

const bucket = 'platform-blobs';
const s3Port = (await portIsFree(basePort + 100)) ? basePort + 100 : await freePort();
const s3 = new S3rver({
  port: s3Port,
  address: '127.0.0.1',
  silent: true,
  directory: path.join(dataDir, 's3'),
  configureBuckets: [{ name: bucket }],
});
await s3.run();

// every node must share the secrets key
const keyFile = path.join(dataDir, 'secrets.key');
let secretsKey: string;
try {
  secretsKey = (await readFile(keyFile, 'utf8')).trim();
} catch {
  secretsKey = randomBytes(32).toString('hex');
  await writeFile(keyFile, secretsKey + '\n', { mode: 0o600 });
}

const shared: Record<string, string> = {
  DATABASE_URL: databaseUrl,
  PLATFORM_SECRETS_KEY: secretsKey,
  PLATFORM_DATA_DIR: dataDir,
  PLATFORM_BLOB_STORE: 's3',
  PLATFORM_S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
  PLATFORM_S3_BUCKET: bucket,
  PLATFORM_S3_REGION: 'us-east-1',
  PLATFORM_S3_ACCESS_KEY_ID: 'S3RVER',
  PLATFORM_S3_SECRET_ACCESS_KEY: 'S3RVER',
  PLATFORM_S3_FORCE_PATH_STYLE: 'true',
  PLATFORM_LOG_LEVEL: process.env.PLATFORM_LOG_LEVEL ?? 'warn',
  // killed outright (SIGKILL), this script cannot stop them: each stops itself when it sees it gone
  PLATFORM_EXIT_WITH_PARENT: '1',
};

function start(name: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [path.join(ROOT, 'src/start.mjs')], {
    cwd: ROOT,
    env: { ...process.env, ...shared, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const prefix = (chunk: Buffer) =>
    chunk
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => `${name}: ${l}`)
      .join('\n') + '\n';
  child.stdout!.on('data', (d: Buffer) => process.stdout.write(prefix(d)));
  child.stderr!.on('data', (d: Buffer) => process.stderr.write(prefix(d)));
  child.on('exit', (code, signal) => {
    if (!stopping) say(`${name} exited (${signal ?? code}); the others keep running`);
  });
  children.push({ name, child });
  return child;
}

// the second port is the next one when free: an outgoing connection (Postgres's, S3's, started above) may hold it
const apiPorts = [basePort, (await portIsFree(basePort + 1)) ? basePort + 1 : await freePort()];
const nodes = apiPorts.map((port, i) => ({
  name: `api-${i + 1}`,
  port,
  child: start(`api-${i + 1}`, {
    PLATFORM_ROLE: 'api',
    PORT: String(port),
    PLATFORM_PUBLIC_PORT: String(port),
  }),
}));
const workers = [1, 2].map((i) => ({
  name: `worker-${i}`,
  child: start(`worker-${i}`, { PLATFORM_ROLE: 'worker' }),
}));

async function up(node: { name: string; port: number; child: ChildProcess }): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 60_000; ) {
    if (node.child.exitCode !== null || node.child.signalCode !== null)
      throw new Error(`${node.name} exited before it came up`);
    // bounded: whatever else holds the port may take the connection and never answer
    const ok = await fetch(`http://127.0.0.1:${node.port}/healthz`, {
      signal: AbortSignal.timeout(2000),
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${node.name} (port ${node.port}) did not come up within 60 s`);
}
/** Bounds a step of the stop: one that hangs must not keep the rest from running. */
const within = (ms: number, step: Promise<unknown>) =>
  Promise.race([step.catch(() => {}), new Promise((r) => setTimeout(r, ms).unref())]);

async function stop(code = 0): Promise<void> {
  if (stopping) return;
  stopping = true;
  say('stopping the cluster…');
  // each process drains within its own 10 s bound; one that does not is killed, so Postgres always stops
  await Promise.all(
    children.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.once('exit', () => {
            clearTimeout(force);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  await within(5_000, s3.close());
  await within(40_000, pg.stop());
  process.exit(code);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
// The processes are not detached, but nothing ends them with this one: a failed start stops them all.
try {
  await Promise.all(nodes.map(up));
} catch (err) {
  process.stderr.write(`the cluster did not come up: ${(err as Error).message}\n`);
  await stop(1);
}

say('cluster is up');
for (const n of nodes)
  say(
    `  ${n.name}     http://127.0.0.1:${n.port}  (pid ${n.child.pid})   apps at http://<app_id>.apps.localhost:${n.port}`,
  );
for (const w of workers) say(`  ${w.name}  pid ${w.child.pid}`);
say(`  postgres  ${databaseUrl.replace(/:[^:@/]+@/, ':***@')}`);
say(`  s3        http://127.0.0.1:${s3Port}  bucket ${bucket}`);
say(
  `  first API key:  PLATFORM_DATA_DIR=${path.relative(process.cwd(), dataDir) || '.'} npm run admin -- create-user --email you@example.com`,
);
say('Ctrl-C stops everything.');

/**
 * CI's Deno smoke test: starts src/main-deno.ts under Deno 2 (from the npm registry) against a
 * real Postgres, then checks /healthz and an authenticated /v0/accounts. Prints `N passed, N failed`.
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createDb, createPool } from '../src/db/database.ts';
import { scratchDatabase } from './_lib/scratch-db.ts';
import { createUser } from '../src/users/service.ts';
import { freePort } from '../src/lib/ports.ts';

const ROOT = path.resolve(new URL('..', import.meta.url).pathname);
let passed = 0;
let failed = 0;
function check(name: string, ok: boolean, detail = ''): void {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} deno: ${name}${ok ? '' : `  ${detail}`}`);
}

const scratch = await scratchDatabase('deno-smoke', 50000);
const url = scratch.url;
// probed, and below the range outgoing connections take ports from (the Deno service listens a second or two later)
const port = await freePort();
let child: ReturnType<typeof spawn> | undefined;
try {
  const pool = createPool(url, 2);
  const db = createDb(pool);
  const user = await createUser(db, { email: `deno-${process.pid}@example.com` });
  await db.destroy();

  // Deno 2 from the npm registry (not a devDependency: its other platforms' packages are not all
  // resolvable here, which breaks `npm ci`). DENO_BIN points at another deno binary if wanted.
  const [cmd, ...pre] = process.env.DENO_BIN
    ? [process.env.DENO_BIN]
    : ['npx', '--yes', 'deno@2.9.6'];
  child = spawn(
    cmd!,
    [
      ...pre,
      'run',
      '--allow-net',
      '--allow-env',
      '--allow-read',
      '--allow-write',
      '--allow-run',
      '--allow-sys',
      'src/main-deno.ts',
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: url,
        PORT: String(port),
        PLATFORM_SECRETS_KEY: 'a'.repeat(64),
        PLATFORM_LOG_LEVEL: 'warn',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // its own process group: npx does not pass signals on to deno, so the whole group is stopped at the end
      detached: true,
    },
  );
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 120_000;
  let health: Response | undefined;
  while (Date.now() < deadline) {
    health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
    if (health) break;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  const body = health ? await health.json() : undefined;
  check(
    'GET /healthz answers ok with db ok',
    health?.status === 200 && body?.status === 'ok' && body?.db === 'ok',
    output.slice(-2000),
  );
  const accounts = await fetch(`http://127.0.0.1:${port}/v0/accounts`, {
    headers: { authorization: `Bearer ${user.api_key}` },
  }).catch(() => undefined);
  const accountsBody = accounts ? await accounts.json() : undefined;
  check(
    'GET /v0/accounts with an API key',
    accounts?.status === 200 && accountsBody?.default_account_id === user.account_id,
    JSON.stringify(accountsBody),
  );
  const anon = await fetch(`http://127.0.0.1:${port}/v0/accounts`).catch(() => undefined);
  check('GET /v0/accounts without a key is 401', anon?.status === 401);
  // sign-in runs on Deno too: a link request (counted against the client's address) and a device login start
  const link = await fetch(`http://127.0.0.1:${port}/v0/auth/email/request`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'deno-signin@example.com' }),
  }).catch(() => undefined);
  check(
    'POST /v0/auth/email/request answers 202',
    link?.status === 202,
    link ? await link.text() : 'no answer',
  );
  const device = await fetch(`http://127.0.0.1:${port}/v0/auth/device/start`, {
    method: 'POST',
  }).catch(() => undefined);
  const deviceBody = device ? await device.json() : undefined;
  // the console and the docs hosts (a Host header, which fetch cannot set)
  const page = (host: string, path: string) =>
    new Promise<{ status: number; body: string }>((resolve) => {
      const req = http.request(
        { host: '127.0.0.1', port, path, headers: { host: `${host}:${port}` } },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', () => resolve({ status: 0, body: '' }));
      req.end();
    });
  const signIn = await page('console.localhost', '/sign-in');
  check(
    'the console serves its sign-in page',
    signIn.status === 200 && signIn.body.includes('Send me a sign-in link'),
  );
  const guide = await page('docs.localhost', '/guides/quick-start');
  check('the docs host serves a guide', guide.status === 200 && guide.body.includes('Quick start'));
  check(
    'POST /v0/auth/device/start gives a user code',
    device?.status === 200 && /^[A-Z]{4}-[A-Z]{4}$/.test(deviceBody?.user_code ?? ''),
    JSON.stringify(deviceBody),
  );
} finally {
  if (child?.pid) await stopGroup(child.pid);
  await scratch.close();
}

/** SIGTERM to the process group (npx and deno), SIGKILL to whatever is left after 5 s. */
async function stopGroup(pid: number): Promise<void> {
  const signal = (sig: NodeJS.Signals | 0) => {
    try {
      process.kill(-pid, sig);
      return true;
    } catch {
      return false; // no process left in the group
    }
  };
  signal('SIGTERM');
  for (let waited = 0; waited < 5000 && signal(0); waited += 100)
    await new Promise((r) => setTimeout(r, 100));
  signal('SIGKILL');
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

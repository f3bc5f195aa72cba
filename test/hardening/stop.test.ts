/**
 * Stopping the real `npm start`: whatever receives SIGTERM (npm alone, or npm's whole process
 * group, as a supervisor or container runtime sends it), the service drains, Postgres stops last,
 * and npm returns only when nothing of this data dir is left running. A second `npm start` on a
 * data dir in use says so and leaves the first instance's Postgres alone. Run on Deno (the suite's
 * Deno run), every case is the same with `deno task start` in npm's place.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../../src/lib/ports.ts';
import { file, site } from '../_lib/bundles.ts';
import { ADMIN_ARGS, killProcessesOf, processesOf, START } from '../_lib/processes.ts';

const exec = promisify(execFile);
const dataDir = path.resolve('.data', 'test-scratch', `stop-${process.pid}`);
/**
 * This data dir's Postgres port: another test file starting a service of its own at the same moment
 * would otherwise find the default port free too, and one of the two would fail to start on it.
 */
const pgPort = await freePort();

function env(port: number): Record<string, string> {
  const e: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PLATFORM_DATA_DIR: dataDir,
    PORT: String(port),
    PLATFORM_PG_PORT: String(pgPort),
    PLATFORM_LOG_LEVEL: 'info',
  };
  delete e.DATABASE_URL;
  delete e.TEST_DATABASE_URL;
  return e;
}

/** Every process still running that belongs to this data dir: npm, sh, the service, pg_ctl, postgres. */
const leftovers = () => processesOf(dataDir);

const children: ChildProcess[] = [];
/** `npm`: the command started, npm unless told otherwise. */
type Started = {
  npm: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
};

/** `npm start` (or `command`, which starts the service some other way) on a free port; resolves once it is up. */
async function start(
  command: [string, string[]] = START.command,
  extraEnv: Record<string, string> = {},
): Promise<Started> {
  const port = await freePort();
  // detached: npm leads a process group of its own, as under a supervisor or in a container
  const npm = spawn(command[0], command[1], {
    env: { ...env(port), ...extraEnv },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(npm);
  let out = '';
  npm.stdout!.on('data', (d) => (out += d));
  npm.stderr!.on('data', (d) => (out += d));
  // 'exit', not 'close': the command has returned even if an orphan still holds its output pipes
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  const ready = await Promise.race([
    (async () => {
      while (!out.includes('platform is running')) await new Promise((r) => setTimeout(r, 100));
      return true;
    })(),
    exited.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(false), 90_000).unref()),
  ]);
  assert.ok(ready, `npm start did not come up:\n${out}`);
  return { npm, port, output: () => out, exited };
}

function request(
  port: number,
  method: string,
  pathname: string,
  opts: { host?: string; key?: string; body?: unknown } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const data = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathname,
        headers: {
          host: opts.host ?? `127.0.0.1:${port}`,
          ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
          ...(data ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const SERVER = `export default {
  async fetch(req, ctx) {
    ctx.log.info('served', { path: new URL(req.url).pathname });
    await ctx.jobs.enqueue('work', { at: Date.now() });
    let n = 0; for (let i = 0; i < 20000; i++) n += i;
    return Response.json({ n });
  },
  async job(event, ctx) { ctx.log.info('worked'); },
};`;

/** A publish, then a burst of server requests, jobs and events: a service that has been busy. */
async function serveTraffic(s: Started): Promise<() => Promise<void>> {
  const admin = await exec(
    process.execPath,
    [...ADMIN_ARGS, 'create-user', '--email', `stop-${Date.now()}@example.com`],
    { env: env(s.port) },
  );
  const key = JSON.parse(admin.stdout.trim().split('\n').pop()!).api_key as string;
  const body = site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [file('public/index.html', 'x'), file('server.js', SERVER, 'text/javascript')],
    resources: { jobs: { work: {} } },
  });
  const published = await request(s.port, 'PUT', '/v0/apps', { key, body });
  assert.is(published.status, 200, published.body);
  const host = `${JSON.parse(published.body).app_id}.apps.localhost`;
  for (let i = 0; i < 20; i++) {
    const warm = await request(s.port, 'GET', `/warm-${i}`, { host });
    if (warm.status !== 200) {
      // what the owner would read: the failure's event carries its kind and detail
      await new Promise((r) => setTimeout(r, 1500));
      const events = await request(
        s.port,
        'GET',
        `/v0/apps/${JSON.parse(published.body).app_id}/events?severity=error`,
        { key },
      );
      assert.unreachable(
        `GET /warm-${i} answered ${warm.status} ${warm.body}\nerror events: ${events.body}\n${s.output().slice(-3000)}`,
      );
    }
  }
  // keep server requests and publishes (work on the main thread) in flight while the signal arrives
  let going = true;
  const many = site({
    files: Array.from({ length: 300 }, (_, i) =>
      file(`public/p${i}.html`, `<p>${i} ${'x'.repeat(2000)}</p>`),
    ),
  });
  const load = Promise.all([
    ...Array.from({ length: 6 }, async () => {
      while (going) await request(s.port, 'GET', '/busy', { host }).catch(() => (going = false));
    }),
    ...Array.from({ length: 3 }, async () => {
      while (going)
        await request(s.port, 'PUT', '/v0/apps', { key, body: many }).catch(() => (going = false));
    }),
  ]);
  await new Promise((r) => setTimeout(r, 300));
  return async () => {
    going = false;
    await load;
  };
}

async function assertAllStopped(s: Started, how: string) {
  const code = await Promise.race([
    s.exited,
    new Promise<'hung'>((r) => setTimeout(() => r('hung'), 60_000).unref()),
  ]);
  assert.is.not(code, 'hung', `npm start did not return after ${how}:\n${s.output()}`);
  // checked the moment the command returns: nothing of this data dir may still be running
  assert.equal(leftovers(), [], `left running after ${how}:\n${s.output()}`);
  assert.match(s.output(), 'shutting down');
}

/** Whatever the assertions say, nothing of this test outlives it. */
const killLeftovers = () => killProcessesOf(dataDir);

async function stopsCleanly(how: string, signal: (npm: ChildProcess) => void) {
  let stopLoad = async () => {};
  try {
    const s = await start();
    stopLoad = await serveTraffic(s);
    signal(s.npm);
    await assertAllStopped(s, how);
  } finally {
    killLeftovers();
    await stopLoad();
  }
}

test("SIGTERM to npm start's process group after traffic: everything stops, Postgres last, before the command returns", () =>
  stopsCleanly('SIGTERM to the group', (npm) => process.kill(-npm.pid!, 'SIGTERM')));

test('SIGTERM to the npm process alone (docker stop, most supervisors): the service is not orphaned', () =>
  stopsCleanly('SIGTERM to npm alone', (npm) => process.kill(npm.pid!, 'SIGTERM')));

test('a second npm start on a data dir in use says another instance runs, and leaves its Postgres alone', async () => {
  try {
    await secondRefused(await start());
  } finally {
    killLeftovers();
  }
});

test('a service whose output was closed (the terminal or supervisor reading it went away) stops at its next line, Postgres with it', async () => {
  try {
    const s = await start();
    s.npm.stdout!.destroy();
    s.npm.stderr!.destroy();
    // a sign-in link without SMTP_URL is written to the output: the write that finds the pipe closed
    const sent = await request(s.port, 'POST', '/v0/auth/email/request', {
      host: `console.localhost:${s.port}`,
      body: { email: 'gone@example.com' },
    });
    assert.is(sent.status, 202, sent.body);
    const code = await Promise.race([
      s.exited,
      new Promise<'hung'>((r) => setTimeout(() => r('hung'), 60_000).unref()),
    ]);
    assert.is.not(code, 'hung', 'npm start did not return after its output closed');
    assert.equal(leftovers(), [], 'left running after the output closed');
  } finally {
    killLeftovers();
  }
});

test('with PLATFORM_EXIT_WITH_PARENT=1 (as npm run cluster starts it), a service whose parent is killed outright stops, Postgres with it', async () => {
  try {
    // bash stays the parent (`; true` keeps it from exec'ing node), and is what gets SIGKILL
    const s = await start(['bash', ['-c', `${START.shell}; true`]], {
      PLATFORM_EXIT_WITH_PARENT: '1',
    });
    s.npm.kill('SIGKILL');
    for (const killed = Date.now(); leftovers().length; ) {
      assert.ok(
        Date.now() - killed < 30_000,
        `left running after its parent was killed:\n${leftovers().join('\n')}\n${s.output()}`,
      );
      await new Promise((r) => setTimeout(r, 200));
    }
    // it stopped as on a signal, output still open: drained, Postgres last
    assert.match(s.output(), 'shutting down');
    assert.match(s.output(), 'parent process gone');
  } finally {
    killLeftovers();
  }
});

async function secondRefused(first: Started) {
  const port = await freePort();
  type Failed = { code: number; stdout: string; stderr: string };
  const second = await exec(...START.command, { env: env(port) }).then(
    (): Failed => assert.unreachable('the second instance started') as never,
    (err: Failed) => err,
  );
  assert.is.not(second.code, 0);
  assert.match(second.stderr, `another platform instance (pid `);
  assert.match(second.stderr, 'PLATFORM_DATA_DIR');
  assert.not.match(second.stdout + second.stderr, 'taking it over');
  assert.is(
    (await request(first.port, 'GET', '/healthz')).status,
    200,
    'the first instance and its Postgres still serve',
  );
  process.kill(-first.npm.pid!, 'SIGTERM');
  await assertAllStopped(first, 'SIGTERM after a refused second start');
}

// Stopped by the test runner (its timeout sends SIGTERM): nothing started here may outlive this file.
process.once('SIGTERM', () => {
  killLeftovers();
  process.exit(1);
});

test.after(async () => {
  killLeftovers();
  for (const c of children) {
    c.stdout?.destroy();
    c.stderr?.destroy();
    c.unref();
  }
  http.globalAgent.destroy();
  await rm(dataDir, { recursive: true, force: true });
});
test.run();

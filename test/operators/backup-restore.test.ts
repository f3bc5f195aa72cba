/**
 * Backups as a self-hoster has them: a service started as `npm start` starts it (embedded Postgres,
 * the secrets key in its data dir) holds an app with rows, a file, a secret and a console session;
 * `admin backup` runs while requests keep writing; `admin restore` puts the archive into a fresh
 * data dir, and the service started there has every app, row, file, secret and session. The backup
 * is one snapshot: rows written during it are found through their index entries (another table).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../../src/lib/ports.ts';
import { file, site } from '../_lib/bundles.ts';
import { ADMIN_ARGS, killProcessesOf, START } from '../_lib/processes.ts';

const run = promisify(execFile);
const scratch = path.resolve('.data', 'test-scratch', `backup-${process.pid}`);
const source = path.join(scratch, 'source');
const target = path.join(scratch, 'target');
const backups = path.join(scratch, 'backups');
await rm(scratch, { recursive: true, force: true });

type Service = { port: number; proc: ChildProcess; output: () => string; stop(): Promise<void> };

function envFor(dataDir: string, pgPort: number, port?: number): Record<string, string> {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_PG_PORT: String(pgPort),
    PLATFORM_LOG_LEVEL: 'info',
  };
  if (port) env.PORT = String(port);
  else delete env.PORT;
  delete env.DATABASE_URL;
  delete env.TEST_DATABASE_URL;
  delete env.PLATFORM_SECRETS_KEY;
  return env;
}

async function startService(dataDir: string, pgPort: number): Promise<Service> {
  const port = await freePort();
  const proc = spawn(...START.direct, {
    env: envFor(dataDir, pgPort, port),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // from the 'exit' event, not `exitCode`: that stays null for a child a signal ended, and a stop
  // that waits for an exit already past holds the file open for ever
  let exited = false;
  proc.once('exit', () => (exited = true));
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (out.includes('platform is running')) clearInterval(check), resolve();
    }, 25);
    proc.once(
      'exit',
      (code) => (clearInterval(check), reject(new Error(`exited ${code}:\n${out}`))),
    );
  });
  return {
    port,
    proc,
    output: () => out,
    stop: () =>
      new Promise<void>((r) => {
        if (exited) return r();
        // Deno does not count a wait for a child's exit as pending work; this timer holds the test open
        const hold = setInterval(() => {}, 1000);
        proc.once('exit', () => (clearInterval(hold), r()));
        proc.kill('SIGTERM');
      }),
  };
}

async function admin(dataDir: string, pgPort: number, ...args: string[]) {
  const out = await run(process.execPath, [...ADMIN_ARGS, ...args], {
    env: { ...envFor(dataDir, pgPort), PLATFORM_LOG_LEVEL: 'silent' },
  }).catch((e) => e);
  const last = String(out.stdout).trim().split('\n').pop()!;
  if (!last) throw new Error(`admin ${args[0]} printed nothing: ${out.stderr}`);
  return {
    code: (out.code as number | undefined) ?? 0,
    json: JSON.parse(last),
    stderr: String(out.stderr),
  };
}

/** A request on the wire with a chosen Host header. */
function send(
  port: number,
  host: string,
  method: string,
  p: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: p, headers: { host, ...options.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const SERVER = `export default { async fetch(request, ctx) {
  const u = new URL(request.url);
  const notes = ctx.data.collection('notes');
  if (u.pathname === '/note' && request.method === 'POST') return Response.json(await notes.create({ title: await request.text() }));
  if (u.pathname === '/notes') return Response.json(await notes.list({ limit: 1000 }));
  if (u.pathname === '/indexed') {
    let found = 0;
    for (const row of await notes.list({ limit: 1000 }))
      found += (await notes.list({ where: { title: row.title } })).filter((r) => r.id === row.id).length;
    return Response.json({ found });
  }
  if (u.pathname === '/secret') return new Response(ctx.API_TOKEN);
  if (u.pathname === '/upload') {
    const f = await ctx.files.store('pics').createUpload('picture bytes', { filename: 'p.txt', content_type: 'text/plain' });
    return Response.json({ id: f.file_id, url: ctx.files.store('pics').getPublicUrl(f.file_id) });
  }
  return new Response('hello');
} };`;

const pgA = await freePort();
const pgB = await freePort();
let a: Service | undefined;
let b: Service | undefined;

test('back up a running service under load, restore into a fresh data dir: everything is there', async () => {
  a = await startService(source, pgA);
  const user = await admin(source, pgA, 'create-user', '--email', 'owner@example.com');
  assert.is(user.code, 0, JSON.stringify(user.json));
  const key = user.json.api_key as string;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const api = `api.localhost:${a.port}`;
  const published = await send(a.port, api, 'PUT', '/v0/apps', {
    headers: auth,
    body: JSON.stringify(
      site({
        runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
        resources: {
          data: {
            collections: {
              notes: {
                fields: { title: 'string' },
                indexes: [{ name: 'by_title', fields: ['title'] }],
              },
            },
          },
          files: { stores: { pics: { public: true } } },
        },
        files: [
          file('public/index.html', 'static page'),
          file('server.js', SERVER, 'text/javascript'),
        ],
      }),
    ),
  });
  assert.is(published.status, 200, published.text);
  const appId = JSON.parse(published.text).app_id as string;
  const appHost = `${appId}.apps.localhost:${a.port}`;
  const secret = await send(a.port, api, 'PUT', `/v0/apps/${appId}/secrets/API_TOKEN`, {
    headers: auth,
    body: JSON.stringify({ value: 'tok_12345' }),
  });
  assert.is(secret.status, 200, secret.text);
  for (const t of ['first', 'second', 'third']) {
    const r = await send(a.port, appHost, 'POST', '/note', { body: t });
    assert.is(r.status, 200, `${r.text}\n${a.output().slice(-3000)}`);
  }
  const upload = JSON.parse((await send(a.port, appHost, 'POST', '/upload')).text);
  const fileUrl = new URL(upload.url);

  // a console session, signed in as a person does (no SMTP: the link is printed by the service)
  const consoleHost = `console.localhost:${a.port}`;
  const asked = await send(a.port, consoleHost, 'POST', '/v0/auth/email/request', {
    headers: { 'content-type': 'application/json', origin: `http://${consoleHost}` },
    body: JSON.stringify({ email: 'owner@example.com' }),
  });
  assert.is(asked.status, 202, asked.text);
  let token = '';
  for (let i = 0; i < 400 && !token; i++) {
    token = /auth\/confirm#token=([A-Za-z0-9_-]{43})/.exec(a.output())?.[1] ?? '';
    if (!token) await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(token, 'the sign-in link was printed');
  const confirmed = await send(a.port, consoleHost, 'POST', '/v0/auth/email/confirm', {
    headers: { 'content-type': 'application/json', origin: `http://${consoleHost}` },
    body: JSON.stringify({ token }),
  });
  assert.is(confirmed.status, 200, confirmed.text);
  const cookie = String(confirmed.headers['set-cookie']![0]!).split(';')[0]!;

  // writes keep coming while the backup runs
  let writing = true;
  let acknowledged = 0;
  const writer = Promise.all(
    [0, 1, 2, 3].map(async (w) => {
      for (let i = 0; writing; i++)
        if (
          (await send(a!.port, appHost, 'POST', '/note', { body: `load ${w}.${i}` })).status === 200
        )
          acknowledged++;
    }),
  );
  await new Promise((r) => setTimeout(r, 0));
  const before = acknowledged + 3;
  const backup = await admin(source, pgA, 'backup', '--to', backups);
  writing = false;
  await writer;
  assert.is(backup.code, 0, JSON.stringify(backup.json) + backup.stderr);
  assert.ok(backup.json.rows > 0 && backup.json.bytes > 0);
  const [archive] = await readdir(backups);
  assert.match(archive!, /^platform-backup-\d{8}T\d{9}Z\.tar\.gz$/);
  await a.stop();

  const restored = await admin(target, pgB, 'restore', path.join(backups, archive!));
  assert.is(restored.code, 0, JSON.stringify(restored.json) + restored.stderr);
  b = await startService(target, pgB);
  const api2 = `api.localhost:${b.port}`;
  const apps = JSON.parse(
    (await send(b.port, api2, 'GET', '/v0/apps', { headers: { authorization: `Bearer ${key}` } }))
      .text,
  );
  assert.equal(
    apps.apps.map((x: { app_id: string }) => x.app_id),
    [appId],
    'the app and the API key are back',
  );
  const host2 = `${appId}.apps.localhost:${b.port}`;
  assert.is((await send(b.port, host2, 'GET', '/')).text, 'static page');
  assert.is((await send(b.port, host2, 'GET', '/secret')).text, 'tok_12345', 'the secret decrypts');
  const rows = JSON.parse((await send(b.port, host2, 'GET', '/notes')).text) as { title: string }[];
  const titles = rows.map((r) => r.title);
  for (const t of ['first', 'second', 'third']) assert.ok(titles.includes(t), `${t} is back`);
  assert.ok(
    rows.length >= before,
    `rows written before the backup began are in it (${rows.length} ≥ ${before})`,
  );
  assert.ok(rows.length <= acknowledged + 3);
  // rows and their index entries live in two tables: from one snapshot, every row is found by its index
  const indexed = JSON.parse((await send(b.port, host2, 'GET', '/indexed')).text);
  assert.is(indexed.found, rows.length, 'every restored row is found through its index');
  const picture = await send(b.port, `${appId}.apps.localhost:${b.port}`, 'GET', fileUrl.pathname);
  assert.is(picture.text, 'picture bytes', 'the file is back');
  const session = await send(b.port, `console.localhost:${b.port}`, 'GET', '/v0/platform/session', {
    headers: { cookie },
  });
  assert.is(session.status, 200, session.text);
  assert.is(JSON.parse(session.text).user.email, 'owner@example.com', 'the session is back');
  await b.stop();

  const again = await admin(target, pgB, 'restore', path.join(backups, archive!));
  assert.is(again.code, 1);
  assert.match(again.json.error.message, /empty data dir or database/);
});

test('restore refuses what is not a backup, and says so', async () => {
  const junk = path.join(scratch, 'junk.tar.gz');
  await writeFile(junk, 'not a backup');
  const r = await admin(path.join(scratch, 'junk-target'), pgB, 'restore', junk);
  assert.is(r.code, 1);
  assert.is(r.json.error.code, 'invalid_request');
  assert.match(r.json.error.message, /is not a readable backup/);
});

test.after(async () => {
  await a?.stop();
  await b?.stop();
  for (const d of [source, target, path.join(scratch, 'junk-target')]) killProcessesOf(d);
  await rm(scratch, { recursive: true, force: true });
});
test.run();

/**
 * `platform dev`, as a developer runs it: the real CLI starts its own platform on an embedded
 * Postgres in a data directory of its own, publishes the folder, republishes on save, reads .env,
 * prints the app's events, runs a job on request, and leaves no process behind after Ctrl-C.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, writeSite } from '../_lib/cli.ts';
import { alive, request } from '../_lib/http.ts';

const work = path.resolve('.data', 'test-scratch', `cli-dev-${process.pid}`);
const dataDir = path.join(work, 'platform-data');
// no platform of the suite's own: `platform dev` starts one; the key below is never used
const { cli, start } = cliFor({ url: 'http://127.0.0.1:9', key: 'ap_unused', work });

const SERVER = (
  version: string,
) => `type Ctx = { secrets: { get(n: string): string | undefined }; log: { info(m: string, md?: unknown): void } };
export default {
  fetch(req: Request, ctx: Ctx) {
    ctx.log.info('hello from dev', { path: new URL(req.url).pathname });
    if (new URL(req.url).pathname === '/boom') throw new Error('kaboom ${version}');
    return new Response('${version} ' + ctx.secrets.get('GREETING'));
  },
  job(event: { payload: unknown }, ctx: Ctx) {
    ctx.log.info('tick ran', { payload: event.payload });
  },
};
`;

const get = async (port: number, host: string, p = '/') => {
  const r = await request(port, 'GET', p, { host });
  return { status: r.status, text: r.text };
};

/** What a browser's address bar asks for (Fetch Metadata says a document). */
const page = (port: number, host: string, p: string) =>
  request(port, 'GET', p, { host, headers: { 'sec-fetch-dest': 'document' } });

/** An open `/_platform/dev/changes` stream, as the reload script holds it; `text` grows as events arrive. */
function changes(port: number, host: string, release: string) {
  const seen = { text: '', ended: false, close: () => {} };
  const req = http.get(
    {
      host: '127.0.0.1',
      port,
      path: `/_platform/dev/changes?release=${release}`,
      headers: { host },
    },
    (res) => {
      res.on('data', (d) => (seen.text += d));
      res.on('end', () => (seen.ended = true));
      res.on('error', () => (seen.ended = true));
    },
  );
  req.on('error', () => (seen.ended = true));
  seen.close = () => req.destroy();
  return seen;
}

async function until<T>(fn: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.before(async () => {
  await rm(work, { recursive: true, force: true });
});

test('platform dev serves the folder, picks up an edit, reads .env, prints ctx.log, runs a job, and stops everything on SIGINT', async () => {
  const dir = await writeSite(
    work,
    'app',
    {
      app: { name: 'Dev app' },
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'src/server.ts' },
      resources: { secrets: { required: ['GREETING'] }, jobs: { tick: {} } },
    },
    {
      'public/index.html': '<h1>dev</h1>',
      'src/server.ts': SERVER('v1'),
      '.env': '# local secrets\nGREETING="howdy partner"\n',
    },
  );
  const run = start(['dev', dir, '--data-dir', dataDir, '--port', '0']);
  try {
    const m = await run.waitForOutput(/http:\/\/([a-z0-9]+)\.apps\.localhost:(\d+)/, 90_000);
    const host = `${m[1]}.apps.localhost`;
    const port = Number(m[2]);
    assert.match(run.out.stdout, /✔ live/);
    /** Waits until /x answers `text`; if it never does, says what it answered and what platform dev printed (CI saw one such timeout). */
    let last = '';
    const answers = (text: string) =>
      until(async () => (last = (await get(port, host, '/x')).text) === text).catch(
        (err: Error) => {
          // without the app's own log line, which each poll prints
          const printed = run.out.stdout
            .split('\n')
            .filter((l) => !l.includes('hello from dev'))
            .slice(-40)
            .join('\n');
          throw new Error(
            `${err.message} waiting for "${text}"; /x answered "${last}"; platform dev printed:\n${printed}\n${run.out.stderr.slice(-2000)}`,
          );
        },
      );

    // .env became the secret, so the first release is live and reads it
    assert.equal(await get(port, host, '/hello'), { status: 200, text: 'v1 howdy partner' });
    // ctx.log reaches the terminal
    await run.waitForOutput(/log\s+hello from dev \{"path":"\/hello"\}/);

    // an edit is live shortly after the save
    await writeFile(path.join(dir, 'src/server.ts'), SERVER('v2'));
    await answers('v2 howdy partner');
    assert.match(run.out.stdout, /src\/server\.ts changed/);

    // a changed .env is set before the next publish
    await writeFile(path.join(dir, '.env'), 'GREETING=changed\n');
    await answers('v2 changed');

    // a build error is printed with file and line; the last good release keeps serving
    const mark = run.out.stdout.length;
    await writeFile(path.join(dir, 'src/server.ts'), 'export default {\n  fetch( {\n');
    await run.waitForOutput(/src\/server\.ts:\d+:\d+/, 15_000, mark);
    // the message after the compiler's may arrive in a later chunk of output
    await run.waitForOutput(/The last good release keeps serving/, 15_000, mark);
    assert.equal(await get(port, host, '/x'), { status: 200, text: 'v2 changed' });
    await writeFile(path.join(dir, 'src/server.ts'), SERVER('v3'));
    await answers('v3 changed');

    // `platform jobs run --dev` reaches the development app; its log line shows up here
    const job = await cli(['jobs', 'run', 'tick', '--dev', '--payload', '{"n":7}'], { cwd: dir });
    assert.is(job.code, 0, job.stdout + job.stderr);
    await run.waitForOutput(/tick ran \{"payload":\{"n":7\}\}/);
    await run.waitForOutput(/Job tick succeeded/);
    // .env is a secret, never a file of the release
    assert.is(
      (await get(port, host, '/.env')).text,
      'v3 changed',
      'the server answered: no such static file',
    );

    // a page the browser opens carries the reload script; what code fetches is left as it is
    const opened = await page(port, host, '/');
    assert.match(
      opened.text,
      /^<h1>dev<\/h1><script src="\/_platform\/dev\/reload\.js" data-release="rel_\w+" defer><\/script>$/,
    );
    assert.is((await get(port, host, '/')).text, '<h1>dev</h1>');
    const served = /data-release="(rel_\w+)"/.exec(opened.text)![1]!;
    const script = await get(port, host, '/_platform/dev/reload.js');
    assert.match(script.text, /new EventSource\('\/_platform\/dev\/changes\?release='/);

    // a thrown error: a page with the stack, mapped to the source, for the browser; the generic body for code
    const boom = await page(port, host, '/boom');
    assert.is(boom.status, 500);
    assert.match(boom.text, /<h1>Error: kaboom v3<\/h1>|<h1>kaboom v3<\/h1>/);
    assert.match(boom.text, /src\/server\.ts:\d+:\d+/);
    assert.match(boom.text, /data-release=/, 'the error page reloads itself after a fix');
    const plain = await get(port, host, '/boom');
    assert.is(JSON.parse(plain.text).error.code, 'runtime_error');

    // an open page hears of the next release and reloads
    const stream = changes(port, host, served);
    await until(async () => stream.text.includes('retry:'));
    assert.not.match(stream.text, 'event: release');
    await writeFile(path.join(dir, 'src/server.ts'), SERVER('v4'));
    await until(async () => stream.text.includes('event: release'));
    assert.match(stream.text, /event: release\ndata: rel_\w+\n\n/);
    await until(async () => stream.ended);
    await answers('v4 changed');
    // one left open: Ctrl-C must not wait for it
    const current = /data-release="(rel_\w+)"/.exec((await page(port, host, '/')).text)![1]!;
    const held = changes(port, host, current);
    await until(async () => held.text.includes('retry:'));
  } finally {
    const postmaster = await readFile(
      path.join(dataDir, 'postgres', 'postmaster.pid'),
      'utf8',
    ).catch(() => '');
    const pgPid = Number(postmaster.split('\n')[0]);
    run.child.kill('SIGINT');
    const code = await Promise.race([
      run.exited,
      new Promise((r) => setTimeout(() => r('hung'), 20_000).unref()),
    ]);
    assert.is(code, 0, `exit after SIGINT: ${run.out.stderr}`);
    assert.ok(pgPid > 0, 'Postgres was running');
    await until(async () => !alive(pgPid), 5_000);
    const left = execFileSync('ps', ['-eo', 'pid,args'])
      .toString()
      .split('\n')
      .filter((l) => l.includes(dataDir));
    assert.equal(left, [], 'no process of the dev platform is left');
  }
});

test('a second run reuses the data directory, the dev key and the development app; started on a build error, it shows the address once the fix is live', async () => {
  const dir = path.join(work, 'app');
  const before = JSON.parse(await readFile(path.join(dir, '.platform', 'dev.json'), 'utf8'));
  await writeFile(path.join(dir, 'src/server.ts'), 'export default {\n  fetch( {\n');
  const run = start(['dev', dir, '--data-dir', dataDir, '--port', '0']);
  try {
    const local = await run.waitForOutput(/local platform at http:\/\/127\.0\.0\.1:(\d+)/, 60_000);
    await run.waitForOutput(/The last good release keeps serving/, 30_000);
    // a save before the watcher is set up would go unseen: wait for it
    await run.waitForOutput(/^watching /m, 30_000);
    const appId = Object.values(before)[0] as string;
    // the release that was live when the last run stopped still serves
    assert.equal(await get(Number(local[1]), `${appId}.apps.localhost`, '/x'), {
      status: 200,
      text: 'v4 changed',
    });
    await writeFile(path.join(dir, 'src/server.ts'), SERVER('v4'));
    const m = await run.waitForOutput(/http:\/\/([a-z0-9]+)\.apps\.localhost:(\d+)/, 15_000);
    assert.equal(
      JSON.parse(await readFile(path.join(dir, '.platform', 'dev.json'), 'utf8')),
      before,
    );
    assert.is(m[1], appId, 'the same development app');
    assert.equal(await get(Number(m[2]), `${m[1]}.apps.localhost`, '/x'), {
      status: 200,
      text: 'v4 changed',
    });
  } finally {
    run.child.kill('SIGINT');
    assert.is(await run.exited, 0);
  }
  // and without a running dev service, `jobs run --dev` says so
  const none = await cli(['jobs', 'run', 'tick', '--dev'], { cwd: dir });
  assert.is(none.code, 1);
  assert.match(none.stderr, 'no_dev_app');
});

test('Ctrl-C while the local platform is still starting stops it anyway, Postgres included', async () => {
  // the data directory the tests above made: Postgres starts at once, so the signal lands while it does
  const dir = path.join(work, 'app');
  const early = dataDir;
  const run = start(['dev', dir, '--data-dir', early, '--port', '0']);
  await run.waitForOutput(/starting a local platform/, 30_000);
  run.child.kill('SIGINT');
  const code = await Promise.race([
    run.exited,
    new Promise((r) => setTimeout(() => r('hung'), 60_000).unref()),
  ]);
  assert.is(code, 0, run.out.stderr);
  const left = execFileSync('ps', ['-eo', 'pid,args'])
    .toString()
    .split('\n')
    .filter((l) => l.includes(early));
  assert.equal(left, [], 'no Postgres of the interrupted start is left');
});

test.run();

/**
 * `platform publish` of TypeScript and npm packages: the CLI bundles with esbuild, the release holds
 * the bundle and its source map (never served), and error stacks name the user's `.ts` files.
 */
import { run, type Runner } from 'graphile-worker';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { workerLogger } from '../../src/boot.ts';
import { WORKER_PRESET } from '../../worker/runner.ts';
import { taskList } from '../../worker/tasks.ts';
import { eventsOf as eventsOfApp, waitFor } from '../_lib/apps.ts';
import { cliFor, linkPackages, writeSite } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `cli-build-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
let runner: Runner;

const MANIFEST = {
  app: { name: 'TS app' },
  runtime: { static_root: 'public', fallback: 'server', server_entry: 'src/server.ts' },
  resources: { jobs: { explode: { max_attempts: 1 } } },
};
// line numbers matter: the tests below look for them in stack traces
const BOOM_TS = `export type Reason = { why: string };

export function explode(reason: Reason): never {
  throw new Error('kaboom: ' + reason.why);
}
`;
const SERVER_TS = `import { Hono } from 'hono';
import { greet } from 'greet-pkg';
import { explode } from './routes/boom.ts';

type Env = { Bindings: { app: { app_id: string } } };
const app = new Hono<Env>();
app.get('/api/hi', (c) => c.json({ greeting: greet('ts'), app: c.env.app.app_id }));
app.get('/api/boom', () => explode({ why: 'on purpose' }));
// what escapes a handler reaches the platform, which records it with its stack
app.onError((err) => { throw err; });
app.get('/api/logged', (c) => { try { explode({ why: 'logged' }); } catch (err) { console.error(err); } return c.text('logged'); });

export default {
  fetch: app.fetch,
  async job(event: { job_name: string }) {
    if (event.job_name === 'explode') explode({ why: 'in a job' });
  },
};
`;
/** A package with a Node build and a worker build: the bundle must take the worker one. */
const GREET_PKG = {
  'node_modules/greet-pkg/package.json': JSON.stringify({
    name: 'greet-pkg',
    version: '1.0.0',
    type: 'module',
    exports: { '.': { worker: './worker.js', node: './node.js', default: './node.js' } },
  }),
  'node_modules/greet-pkg/worker.js':
    'export const greet = (who) => `hello ${who} from the worker build`;',
  'node_modules/greet-pkg/node.js':
    "import fs from 'node:fs'; export const greet = (who) => `hello ${who} from node ${typeof fs}`;",
};

async function tsApp(
  name: string,
  manifest: unknown = MANIFEST,
  extra: Record<string, string> = {},
) {
  const dir = await writeSite(work, name, manifest, {
    'public/index.html': '<h1>ts</h1>',
    'src/server.ts': SERVER_TS,
    'src/routes/boom.ts': BOOM_TS,
    ...GREET_PKG,
    ...extra,
  });
  await linkPackages(dir, ['hono']);
  return dir;
}

const appOf = async (dir: string) =>
  JSON.parse(await readFile(path.join(dir, '.platform', 'app.json'), 'utf8')).app_id as string;
const get = (appId: string, p: string) => h.server.request(`http://${appId}.apps.localhost${p}`);
const filesOf = async (releaseId: string) =>
  (
    await h.deps.db
      .selectFrom('release_files')
      .select(['path', 'sha256'])
      .where('release_id', '=', releaseId)
      .orderBy('path')
      .execute()
  ).map((f) => ({ path: f.path, sha: f.sha256.toString('hex') }));
const blobCount = async () =>
  Number(
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from blobs where account_id = ${u.account_id}`.execute(h.deps.db)
    ).rows[0]!.n,
  );

test.before(async () => {
  runner = await run({
    pgPool: h.deps.pool,
    taskList: taskList(h.deps, h.server.runtime),
    noHandleSignals: true,
    pollInterval: 100,
    concurrency: 2,
    logger: workerLogger(),
    preset: WORKER_PRESET,
  });
});

let appId = '';
let dir = '';

test('a TypeScript entry importing hono and a second package publishes bundled, and serves', async () => {
  dir = await tsApp('ts-app');
  const r = await cli(['publish', dir, '--json']);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const body = JSON.parse(r.stdout);
  appId = body.app_id;
  const res = await get(appId, '/api/hi');
  assert.is(res.status, 200);
  assert.equal(await res.json(), { greeting: 'hello ts from the worker build', app: appId });
  // the release holds the bundle and its map, the static files, and not the server source
  const files = await filesOf(body.release_id);
  assert.equal(
    files.map((f) => f.path),
    ['.platform/build/server.js', '.platform/build/server.js.map', 'public/index.html'],
  );
  const release = await h.deps.db
    .selectFrom('releases')
    .select(['manifest', 'provenance'])
    .where('id', '=', body.release_id)
    .executeTakeFirstOrThrow();
  assert.is(
    (release.manifest as { runtime: { server_entry: string } }).runtime.server_entry,
    '.platform/build/server.js',
  );
  assert.match(JSON.stringify(release.provenance), /"entry":"src\/server.ts"/);
  // the user's manifest still names their source
  assert.match(
    await readFile(path.join(dir, 'manifest.platform.json'), 'utf8'),
    '"server_entry":"src/server.ts"',
  );
  const human = await cli(['publish', dir]);
  assert.match(human.stdout, /server\s+src\/server.ts bundled/);
});

test("a thrown error's event names the .ts file, line and column", async () => {
  const res = await get(appId, '/api/boom');
  assert.is(res.status, 500);
  assert.is((await res.json()).error.code, 'runtime_error');
  const ev = await waitFor(
    async () => (await eventsOfApp(h, u.api_key, appId, 'runtime.request_error'))[0],
  );
  const stack = String(ev.metadata.stack);
  assert.match(stack, /src\/routes\/boom\.ts:4:\d+/, stack);
  assert.not.match(stack, '.platform/build/server.js', 'no frame left in the bundle');
  assert.match(stack, /src\/server\.ts:8:\d+/, 'the caller too');
});

test('a stack the app logs itself (console.error(err)) names the .ts file too', async () => {
  const res = await get(appId, '/api/logged');
  assert.is(await res.text(), 'logged');
  const ev = await waitFor(
    async () => (await eventsOfApp(h, u.api_key, appId, 'runtime.log.error'))[0],
  );
  assert.match(ev.message, /src\/routes\/boom\.ts:4:\d+/, ev.message);
  assert.not.match(ev.message, '.platform/build/server.js', 'no frame left in the bundle');
});

test('a job that throws: job.failed names the .ts file (through `platform jobs run`)', async () => {
  const r = await cli(['jobs', 'run', 'explode', '--payload', '{"n":1}'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /job_[A-Za-z0-9]+/);
  const failed = await waitFor(
    async () => (await eventsOfApp(h, u.api_key, appId, 'job.failed'))[0],
  );
  assert.match(String(failed.metadata.stack), /src\/routes\/boom\.ts:4:\d+/);
  const undeclared = await cli(['jobs', 'run', 'nope'], { cwd: dir });
  assert.is(undeclared.code, 1);
  assert.match(undeclared.stderr, 'not_found');
  const badJson = await cli(['jobs', 'run', 'explode', '--payload', '{nope'], { cwd: dir });
  assert.is(badJson.code, 1);
  assert.match(badJson.stderr, /--payload/);
});

test('the bundle and its map are never static files, whatever static_root says', async () => {
  for (const p of [
    '/.platform/build/server.js',
    '/.platform/build/server.js.map',
    '/src/server.ts',
  ])
    assert.is((await get(appId, p)).status, 404, p);
  const exposed = await tsApp('ts-exposed', {
    ...MANIFEST,
    runtime: { ...MANIFEST.runtime, static_root: '.platform', fallback: '404' },
  });
  const r = await cli(['publish', exposed, '--json']);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const id = JSON.parse(r.stdout).app_id;
  for (const p of ['/build/server.js', '/build/server.js.map', '/build/', '/'])
    assert.is((await get(id, p)).status, 404, p);
});

test('republishing unchanged source creates no new blobs (the build is deterministic)', async () => {
  const before = await blobCount();
  const first = JSON.parse((await cli(['publish', dir, '--json'])).stdout);
  const second = JSON.parse((await cli(['publish', dir, '--json'])).stdout);
  assert.is.not(first.release_id, second.release_id);
  assert.equal(await filesOf(second.release_id), await filesOf(first.release_id));
  assert.is(await blobCount(), before);
  // an edit changes the bundle (and only what changed is stored)
  await writeFile(path.join(dir, 'src/routes/boom.ts'), BOOM_TS.replace('kaboom', 'KABOOM'));
  const third = JSON.parse((await cli(['publish', dir, '--json'])).stdout);
  assert.ok((await blobCount()) > before);
  assert.is.not(
    (await filesOf(third.release_id))[0]!.sha,
    (await filesOf(second.release_id))[0]!.sha,
  );
});

test('a syntax error fails the publish with file, line and the line itself, and publishes nothing', async () => {
  const broken = await tsApp('ts-broken', MANIFEST, {
    'src/routes/boom.ts': 'export function explode(r: { why: string }) {\n  const x = ;\n}\n',
  });
  const releases = async () =>
    Number(
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from releases r join apps a on a.id = r.app_id where a.account_id = ${u.account_id}`.execute(
          h.deps.db,
        )
      ).rows[0]!.n,
    );
  const before = await releases();
  const r = await cli(['publish', broken]);
  assert.is(r.code, 1);
  assert.match(r.stderr, 'src/routes/boom.ts:2:12');
  assert.match(r.stderr, 'const x = ;');
  assert.match(r.stderr, 'build_failed');
  assert.is(await releases(), before, 'nothing was sent');
  // a package that is not installed is a build error too
  const missing = await tsApp('ts-missing', MANIFEST, {
    'src/server.ts':
      "import { nope } from 'not-installed';\nexport default { fetch: () => new Response(nope) };\n",
  });
  const m = await cli(['publish', missing]);
  assert.is(m.code, 1);
  assert.match(m.stderr, /src\/server\.ts:1:\d+.*not-installed/s);
});

test('a module that throws while loading: exit 5, the reason and runtime.deploy_failed name the .ts line', async () => {
  const throwing = await tsApp('ts-throws', MANIFEST, {
    'src/server.ts':
      "import { explode } from './routes/boom.ts';\nexplode({ why: 'at load' });\nexport default {};\n",
  });
  const r = await cli(['publish', throwing]);
  assert.is(r.code, 5, r.stdout + r.stderr);
  assert.match(r.stdout, /kaboom: at load \(at src\/routes\/boom\.ts:4:\d+\)/);
  const id = await appOf(throwing);
  const ev = (await eventsOfApp(h, u.api_key, id, 'runtime.deploy_failed'))[0]!;
  assert.match(String(ev.metadata.stack), /src\/routes\/boom\.ts:4:\d+/);
});

test('plain JavaScript with relative imports is sent as it is; --no-bundle sends a TypeScript entry unbundled', async () => {
  const plain = await writeSite(
    work,
    'plain-js',
    {
      app: { name: 'Plain' },
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    },
    {
      'public/index.html': 'x',
      'server.js':
        "import { hi } from './lib/hi.js';\nexport default { fetch: () => new Response(hi) };\n",
      'lib/hi.js': "export const hi = 'plain';\n",
    },
  );
  const r = await cli(['publish', plain, '--json']);
  assert.is(r.code, 0, r.stderr);
  const body = JSON.parse(r.stdout);
  assert.equal(
    (await filesOf(body.release_id)).map((f) => f.path),
    ['lib/hi.js', 'public/index.html', 'server.js'],
  );
  assert.is(await (await get(body.app_id, '/x')).text(), 'plain');
  const raw = await cli(['publish', dir, '--no-bundle', '--json']);
  assert.is(raw.code, 5, 'the sandbox cannot load TypeScript as written');
});

test.after(async () => {
  await runner.stop();
  await live.close();
  await h.close();
});
test.run();

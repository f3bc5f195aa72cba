/**
 * A published release's modules are stored as the engine's bytecode, and another node's cold start
 * evaluates that pack instead of compiling the source: node B answers from the stored pack (shown
 * by replacing it with one made from other source), and a release whose pack is gone still answers
 * from its source.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createDb, createPool } from '../../src/db/database.ts';
import type { Deps } from '../../src/deps.ts';
import { createLogger } from '../../src/logger.ts';
import { readBytecode, storeBytecode } from '../../src/releases/bytecode.ts';
import { engineBuildId, engineChoice } from '../../src/sandbox/engine.ts';
import { SandboxPool } from '../../src/sandbox/pool.ts';
import { DEFAULT_INSTANCE_LIMITS } from '../../src/sandbox/protocol.ts';
import { createServer } from '../../src/server.ts';
import { createSignals } from '../../src/signals.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const a = await createHarness({ PLATFORM_ENGINE: 'own' });
const poolB = createPool(a.config.databaseUrl!, 5);
const depsB: Deps = {
  ...a.deps,
  pool: poolB,
  db: createDb(poolB),
  signals: createSignals(),
  log: createLogger('silent'),
};
const nodeB = createServer(depsB);
const engine = engineBuildId(engineChoice({ PLATFORM_ENGINE: 'own' }))!;

const release = (server: string) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'x'),
      file('server.js', server, 'text/javascript'),
      // over BYTECODE_MIN_SOURCE_BYTES of source, as a bundle of packages is
      file('lib/answer.js', LIB, 'text/javascript'),
    ],
  });
const LIB = `export const answer = (n) => 'answer ' + n * 2;
export const table = ${JSON.stringify(Array.from({ length: 6000 }, (_, i) => `entry ${i}`))};`;
const SERVER = `import { answer } from './lib/answer.js';
export default { fetch() { return new Response(answer(21)); } };`;

/** A pack made from other source, as the publish-time check makes one. */
async function otherPack(): Promise<Uint8Array> {
  const pool = new SandboxPool({
    workers: 1,
    limits: { cpuMs: 2000, ...DEFAULT_INSTANCE_LIMITS, wallMs: 10_000 },
    hardKillMs: 10_000,
    engine: 'own',
  });
  try {
    const r = await pool.invoke({
      handler: 'load',
      compile: true,
      app: { app_id: 'x', origin: 'http://x.apps.localhost', release_id: 'check_other' },
      release: { releaseId: 'check_other', entry: 'server.js' },
      loadSources: async () => ({
        'server.js': `export default { fetch() { return new Response('from the stored pack'); } };`,
      }),
      request: { method: 'GET', url: 'http://x.apps.localhost/', headers: [] },
      secrets: {},
    });
    return new Uint8Array(r.response!.body!);
  } finally {
    await pool.close();
  }
}

test('a publish stores the bytecode and a cold start on another node evaluates it', async () => {
  const u = await newUser(a);
  const pub = await a.call('PUT', '/v0/apps', { key: u.api_key, body: release(SERVER) });
  assert.is(pub.status, 200, pub.text);
  const { app_id: appId, release_id: releaseId } = pub.body as {
    app_id: string;
    release_id: string;
  };
  const pack = await readBytecode(a.deps.db, releaseId, engine);
  assert.ok(pack && pack.length > 0, 'the publish stored a pack for this engine build');
  assert.is(await readBytecode(a.deps.db, releaseId, 'own-some-other-build'), undefined);

  // the stored pack is what node B runs: one made from other source answers in its place
  await a.deps.db.deleteFrom('release_bytecode').where('release_id', '=', releaseId).execute();
  await storeBytecode(a.deps.db, releaseId, engine, await otherPack());
  const host = `${appId}.apps.localhost`;
  const fromPack = await nodeB.request(`http://${host}/run`);
  assert.is(fromPack.status, 200);
  assert.is(await fromPack.text(), 'from the stored pack');
  // node A kept the instance its publish check loaded from the source
  assert.is((await a.call('GET', '/run', { host })).text, 'answer 42');
});

test('a small release gets no pack and its cold start reads none', async () => {
  const u = await newUser(a);
  const pub = await a.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [
        file('public/index.html', 'x'),
        file(
          'server.js',
          `export default { fetch() { return new Response('small'); } };`,
          'text/javascript',
        ),
      ],
    }),
  });
  const { app_id: appId, release_id: releaseId } = pub.body as {
    app_id: string;
    release_id: string;
  };
  assert.is(await readBytecode(a.deps.db, releaseId, engine), undefined);
  // a pack stored anyway is not read for it: its cold start compiles the source
  await storeBytecode(a.deps.db, releaseId, engine, await otherPack());
  assert.is(await (await nodeB.request(`http://${appId}.apps.localhost/run`)).text(), 'small');
});

test('a release without a stored pack compiles its source', async () => {
  const u = await newUser(a);
  const pub = await a.call('PUT', '/v0/apps', { key: u.api_key, body: release(SERVER) });
  const { app_id: appId, release_id: releaseId } = pub.body as {
    app_id: string;
    release_id: string;
  };
  await a.deps.db.deleteFrom('release_bytecode').where('release_id', '=', releaseId).execute();
  const res = await nodeB.request(`http://${appId}.apps.localhost/run`);
  assert.is(await res.text(), 'answer 42');
});

test.after(async () => {
  await nodeB.close();
  await poolB.end();
  await a.close();
});

test.run();

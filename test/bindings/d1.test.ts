/**
 * Workers D1: an app that calls every operation (test/fixtures/bindings/d1-app, a wrangler project)
 * is published unchanged by the CLI and answers every probe exactly as the same module under
 * Miniflare, `wrangler dev`'s runtime, answers it. Then what the platform owes beyond Miniflare:
 * the database is the app's alone and kept across releases.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { closeD1 } from '../../src/sql/d1.ts';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';
import { startMiniflare } from '../_lib/miniflare.ts';
import { assertSameAnswers } from '../_lib/same-answers.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `d1-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const FIXTURE = path.resolve('test/fixtures/bindings/d1-app');
const PROBES = ['setup', 'insert', 'read', 'types', 'update', 'batch', 'binding', 'errors'];

const onApp = async (appId: string, p: string) => {
  const r = await h.call('GET', `/${p}`, { host: `${appId}.apps.localhost` });
  return { status: r.status, body: r.text };
};

test("a binding's migrations are applied at publish, in order, once, and recorded as wrangler records them", async () => {
  const dir = path.join(work, 'd1-migrated');
  await cp(FIXTURE, dir, { recursive: true });
  await writeFile(
    path.join(dir, 'src/index.js'),
    `export default { async fetch(req, env) {
      const applied = await env.DB.prepare('select id, name from d1_migrations order by id').raw();
      const visits = await env.DB.prepare('select path from visits').raw();
      const indexes = await env.DB.prepare("select name from sqlite_master where type = 'index' and name = 'visits_path'").raw();
      return Response.json({ applied, visits, indexes });
    } }`,
  );
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /2 D1 migrations of DB \(migrations\): applied at publish/, r.stderr);
  const appId = await linkedApp(dir);
  const expected = {
    applied: [
      [1, '0001_create_visits.sql'],
      [2, '0002_index_visits.sql'],
    ],
    visits: [['/seeded']],
    indexes: [['visits_path']],
  };
  assert.equal((await h.call('GET', '/', { host: `${appId}.apps.localhost` })).body, expected);
  // a second publish applies nothing again
  const again = await cli(['publish', '--message', 'again'], { cwd: dir });
  assert.is(again.code, 0, again.stdout + again.stderr);
  assert.equal((await h.call('GET', '/', { host: `${appId}.apps.localhost` })).body, expected);
  // a migration that fails: the release is stored, not live, with the reason; the live one serves on
  await writeFile(
    path.join(dir, 'migrations/0003_broken.sql'),
    'alter table nowhere add column x;',
  );
  const broken = await cli(['publish', '--message', 'broken'], { cwd: dir });
  assert.is.not(broken.code, 0, broken.stdout);
  assert.match(
    broken.stdout + broken.stderr,
    /the D1 migration 0003_broken\.sql of probe \(DB\) failed: no such table: nowhere/,
  );
  assert.equal((await h.call('GET', '/', { host: `${appId}.apps.localhost` })).body, expected);
});

test('the D1 probe app publishes unchanged and answers as under Miniflare', async () => {
  const dir = path.join(work, 'd1-app');
  await cp(FIXTURE, dir, { recursive: true });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /D1 database probe: SQLite kept by the platform/, r.stderr);
  const appId = await linkedApp(dir);
  const control = await startMiniflare(path.join(FIXTURE, 'src/index.js'), { d1Databases: ['DB'] });
  try {
    for (const p of PROBES) {
      const theirs = await control.fetch(`/${p}`);
      const mine = await onApp(appId, p);
      const expected = await theirs.text();
      assert.is(mine.status, theirs.status, `${p}: ${mine.body}`);
      assertSameAnswers(p, JSON.parse(mine.body), JSON.parse(expected));
    }
  } finally {
    await control.stop();
  }
});

test("another app binding the same database name has its own; the app's rows outlive a release", async () => {
  const other = await writeProject(work, 'd1-other', {
    'wrangler.jsonc': JSON.stringify({
      name: 'd1-other',
      main: 'src/index.js',
      d1_databases: [{ binding: 'DB', database_name: 'probe', database_id: 'x' }],
    }),
    'src/index.js': `export default { async fetch(req, env) {
      const tables = await env.DB.prepare("select name from sqlite_master where type = 'table'").raw();
      return Response.json({ tables });
    } }`,
  });
  const r = await cli(['publish'], { cwd: other });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const otherId = await linkedApp(other);
  assert.equal((await h.call('GET', '/', { host: `${otherId}.apps.localhost` })).body, {
    tables: [],
  });
  const dir = path.join(work, 'd1-app');
  const again = await cli(['publish', '--message', 'second release'], { cwd: dir });
  assert.is(again.code, 0, again.stdout + again.stderr);
  const appId = await linkedApp(dir);
  const read = JSON.parse((await onApp(appId, 'read')).body);
  assert.is(read.count, 2, 'the rows of the first release are there');
});

test('platform d1 execute runs SQL on the database by its name, as wrangler d1 execute does', async () => {
  const dir = path.join(work, 'd1-app');
  const read = await cli(
    ['d1', 'execute', 'probe', '--command', 'select name from people order by id'],
    {
      cwd: dir,
    },
  );
  assert.is(read.code, 0, read.stdout + read.stderr);
  assert.match(read.stdout, /^NAME\nAda\nGrace\n$/, JSON.stringify(read));
  const write = await cli(
    [
      'd1',
      'execute',
      'probe',
      '--json',
      '--command',
      "insert into things (k, v) values ('cli', 'x'); select k from things where k = 'cli'",
    ],
    { cwd: dir },
  );
  assert.is(write.code, 0, write.stdout + write.stderr);
  const out = JSON.parse(write.stdout);
  assert.is(out.results[0].changes, 1);
  assert.equal(out.results[1].rows, [['cli']]);
  const refused = await cli(['d1', 'execute', 'probe', '--command', "attach database 'x' as y"], {
    cwd: dir,
  });
  assert.is.not(refused.code, 0);
  assert.match(refused.stdout + refused.stderr, /not authorized/);
  const unknown = await cli(['d1', 'execute', 'nope', '--command', 'select 1'], { cwd: dir });
  assert.is.not(unknown.code, 0);
  assert.match(unknown.stdout + unknown.stderr, /not found/i);
});

test('platform d1 export writes the database as SQL that execute --file reads back', async () => {
  const dir = path.join(work, 'd1-app');
  const file = path.join(work, 'probe.sql');
  const exported = await cli(['d1', 'export', 'probe', '--output', file], { cwd: dir });
  assert.is(exported.code, 0, exported.stdout + exported.stderr);
  const sqlText = await readFile(file, 'utf8');
  assert.match(sqlText, /^PRAGMA defer_foreign_keys=TRUE;\n/);
  assert.match(sqlText, /\nCREATE TABLE people \(id integer primary key, name text not null/);
  assert.match(sqlText, /INSERT INTO "people" VALUES\(2,'Grace',NULL,7\.0,X'0102ff'\);/);
  // read back into another app's database of the same name: the same rows
  const other = await writeProject(work, 'd1-import', {
    'wrangler.jsonc': JSON.stringify({
      name: 'd1-import',
      main: 'src/index.js',
      d1_databases: [{ binding: 'DB', database_name: 'probe', database_id: 'x' }],
    }),
    'src/index.js': `export default { async fetch(req, env) {
      return Response.json(await env.DB.prepare('select id, name, age, score, photo from people order by id').raw());
    } }`,
  });
  assert.is((await cli(['publish'], { cwd: other })).code, 0);
  const imported = await cli(['d1', 'execute', 'probe', '--file', file], { cwd: other });
  assert.is(imported.code, 0, imported.stdout + imported.stderr);
  const otherId = await linkedApp(other);
  const source = await linkedApp(dir);
  const mine = await h.call('GET', '/', { host: `${otherId}.apps.localhost` });
  const rows = await cli(
    [
      'd1',
      'execute',
      'probe',
      '--json',
      '--command',
      'select id, name, age, score, photo from people order by id',
    ],
    { cwd: dir },
  );
  assert.equal(mine.body, JSON.parse(rows.stdout).results[0].rows, source);
});

test('a query that runs away is stopped at its budget, and the node answers the next call', async () => {
  const app = await writeProject(work, 'd1-runaway', {
    'wrangler.jsonc': JSON.stringify({
      name: 'd1-runaway',
      main: 'src/index.js',
      d1_databases: [{ binding: 'DB', database_name: 'runaway', database_id: 'x' }],
    }),
    'src/index.js': `export default { async fetch(req, env) {
      if (new URL(req.url).pathname === '/forever') {
        try {
          await env.DB.prepare('with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c').all();
          return new Response('finished');
        } catch (e) { return new Response(e.message); }
      }
      return Response.json(await env.DB.prepare('select 1 as one').first());
    } }`,
  });
  const r = await cli(['publish'], { cwd: app });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await linkedApp(app);
  const stopped = await h.call('GET', '/forever', { host: `${appId}.apps.localhost` });
  assert.match(
    stopped.text,
    /^D1_ERROR: the query ran longer than the platform allows one call's SQL \(500 ms\) and was stopped: SQLITE_INTERRUPT$/,
  );
  assert.equal((await h.call('GET', '/', { host: `${appId}.apps.localhost` })).body, { one: 1 });
  // back to back, the app gets its share of the node's thread, not all of it: after two budgets'
  // worth, the third waits for its share to refill (500 ms at a quarter of real time)
  await h.call('GET', '/forever', { host: `${appId}.apps.localhost` });
  const third = performance.now();
  const r3 = await h.call('GET', '/forever', { host: `${appId}.apps.localhost` });
  assert.match(r3.text, /SQLITE_INTERRUPT/);
  const waited = performance.now() - third;
  assert.ok(waited >= 1900, `the third slow call waited for its share (${Math.round(waited)} ms)`);
});

test.after(async () => {
  await closeD1(h.deps);
  await live.close();
  await h.close();
});
test.run();

/**
 * Deno KV: an app written for Deno Deploy (test/fixtures/bindings/deno-kv-app, `Deno.serve` and
 * `Deno.openKv()`) is published unchanged and answers every probe as the same script under Deno
 * itself (`deno run --unstable-kv`, a fresh local database): values of every kind, versionstamps
 * that grow, Deno's key order across types, prefix and range lists with cursors, atomic commits
 * with checks, sum/min/max on KvU64, and Deno's errors.
 */
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { startDeno } from '../_lib/deno.ts';
import { assertSameAnswers } from '../_lib/same-answers.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `deno-kv-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const FIXTURE = path.resolve('test/fixtures/bindings/deno-kv-app');
const PROBES = ['basics', 'order', 'list', 'atomic'];

test('the Deno KV probe app publishes unchanged and answers as under Deno', async () => {
  const dir = path.join(work, 'deno-kv-app');
  await cp(FIXTURE, dir, { recursive: true });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /Deno KV \(Deno.openKv\): kept by the platform/);
  const appId = await linkedApp(dir);
  const control = await startDeno(path.join(FIXTURE, 'main.js'), [
    '--unstable-kv',
    '--allow-net',
    '--allow-env',
  ]);
  try {
    for (const p of PROBES) {
      const theirs = (await (await fetch(`${control.url}/${p}`)).json()) as Record<string, unknown>;
      const mine = await h.call('GET', `/${p}`, { host: `${appId}.apps.localhost` });
      assert.is(mine.status, 200, `${p}: ${mine.text}`);
      assertSameAnswers(p, mine.body, theirs);
    }
  } finally {
    await control.stop();
  }
});

test("one app's Deno KV is not another's", async () => {
  const dir = await writeProject(work, 'deno-kv-other', {
    'deno.json': JSON.stringify({ tasks: { start: 'deno run --unstable-kv main.js' } }),
    'main.js': `const kv = await Deno.openKv();
Deno.serve(async () => Response.json((await kv.get(['users', 'ada'])).value));`,
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const seen = await h.call('GET', '/', { host: `${await linkedApp(dir)}.apps.localhost` });
  assert.is(seen.text, 'null');
});

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();

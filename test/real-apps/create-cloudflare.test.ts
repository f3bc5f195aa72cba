/**
 * Real apps no one here wrote, published unchanged: Cloudflare's `create-cloudflare` templates as the
 * npm package ships them (hello-world in JS and TS, with and without assets, assets only, a
 * scheduled Worker, Hono with an assets binding, an OpenAPI API on chanfana + zod). Each is
 * published by the real CLI from its folder, with no manifest and no edits, and every request the
 * Worker answers is compared with the same code under workerd: same status, content type and body.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appOrigin } from '../../src/apps/mappers.ts';
import { startWorkerd, type Workerd } from '../../scripts/_lib/workerd.ts';
import { cliFor, linkPackages } from '../_lib/cli.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';
import { bundleForWorkerd, CORPUS, materialise, type Probe } from '../_lib/real-apps.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `real-apps-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Answer = { status: number; type: string; body: string };

async function onPlatform(appId: string, p: Probe): Promise<Answer> {
  const r = await h.call(p.method ?? 'GET', p.path, {
    host: `${appId}.apps.localhost`,
    ...(p.body === undefined ? {} : { body: p.body }),
  });
  const origins = [appOrigin(h.config, appId), `http://${appId}.apps.localhost`];
  let body = r.text;
  for (const o of origins) body = body.split(o).join('ORIGIN');
  return { status: r.status, type: r.headers.get('content-type') ?? '', body };
}

async function onWorkerd(w: Workerd, p: Probe): Promise<Answer> {
  const r = await fetch(`${w.url}${p.path}`, {
    method: p.method ?? 'GET',
    ...(p.body === undefined
      ? {}
      : { body: JSON.stringify(p.body), headers: { 'content-type': 'application/json' } }),
  });
  return {
    status: r.status,
    type: r.headers.get('content-type') ?? '',
    body: (await r.text()).split(w.url).join('ORIGIN'),
  };
}

for (const app of CORPUS)
  test(`${app.name}: published unchanged, answers as under workerd`, async () => {
    const dir = await materialise(app, path.join(work, app.name));
    await linkPackages(dir, app.packages);
    const r = await cli(['publish'], { cwd: dir });
    assert.is(r.code, 0, `platform publish: ${r.stdout}${r.stderr}`);
    const appId = JSON.parse(await readFile(path.join(dir, '.platform', 'app.json'), 'utf8'))
      .app_id as string;
    for (const f of app.files) {
      const got = await h.call('GET', f.path, { host: `${appId}.apps.localhost` });
      assert.is(got.status, 200, f.path);
      assert.is(got.text, await readFile(path.join(dir, f.file), 'utf8'), f.path);
    }
    if (!app.entry) return;
    const workerd = await startWorkerd(await bundleForWorkerd(dir, app.entry));
    assert.ok(workerd, 'workerd runs here');
    try {
      for (const p of app.probes) {
        const [mine, theirs] = [await onPlatform(appId, p), await onWorkerd(workerd, p)];
        const what = `${p.method ?? 'GET'} ${p.path}`;
        assert.is(mine.status, theirs.status, `${what}: status (${mine.body} / ${theirs.body})`);
        assert.is(mine.type, theirs.type, `${what}: content type`);
        if (p.compare === 'uuid') {
          assert.match(mine.body, UUID, what);
          assert.match(theirs.body, UUID, what);
        } else assert.is(mine.body, theirs.body, what);
      }
    } finally {
      await workerd.stop();
    }
  });

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();

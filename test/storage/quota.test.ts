/**
 * The storage quota: an account's live data rows (as JSON) and app files count against its plan's
 * `storage.bytes.max`. A plans file sets Free's to 100,000 bytes and Starter's to 200,000. Writes past it are refused with
 * 402 `quota_exceeded` (app code gets a PlatformError with that code); deleting and shrinking always
 * work and make room; the status record shows the usage; other accounts are not touched.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp } from '../_lib/apps.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { setPlan } from '../../src/plans/operator.ts';

const plansFile = path.join(tmpdir(), `plans-storage-${process.pid}.json`);
writeFileSync(
  plansFile,
  JSON.stringify({
    free: {
      limits: { 'apps.max': 10000, 'requests.monthly.max': 1e12, 'storage.bytes.max': 100_000 },
    },
    starter: { limits: { 'storage.bytes.max': 200_000 } },
  }),
);
const h = await createHarness({ PLATFORM_PLANS_FILE: plansFile });

const SERVER = `export default { async fetch(req, ctx) {
  const { op, args } = await req.json();
  const notes = ctx.data.collection('notes');
  const docs = ctx.files.store('docs');
  try {
    if (op === 'create') return Response.json({ ok: (await notes.create({ body: 'x'.repeat(args[0]) })).id });
    if (op === 'update') return Response.json({ ok: (await notes.update(args[0], { body: 'y'.repeat(args[1]) })).id });
    if (op === 'delete') return Response.json({ ok: await notes.delete(args[0]) });
    if (op === 'upload') return Response.json({ ok: (await docs.createUpload('z'.repeat(args[0]), { filename: 'z.txt', content_type: 'text/plain' })).file_id });
    if (op === 'unlink') return Response.json({ ok: await docs.delete(args[0]) });
  } catch (e) { return Response.json({ error: { name: e.name, code: e.code, message: e.message } }); }
} };`;
const RESOURCES = {
  auth: { mode: 'app_users', public_signup: true },
  data: {
    collections: {
      notes: { fields: { body: 'string' }, access: { read: 'public', write: 'public' } },
    },
  },
  files: { stores: { docs: { public: false } } },
};

async function appFor() {
  const u = await newUser(h);
  const app = await publishServerApp(h, u.api_key, SERVER, { resources: RESOURCES });
  const rpc = async (op: string, ...args: unknown[]) =>
    (await h.call('POST', '/rpc', { host: app.host, body: { op, args } })).body;
  const status = async () =>
    (await h.api('GET /v0/accounts/{account_id}/status', {
      key: u.api_key,
      params: { account_id: u.account_id },
    })) as any;
  return { u, app, rpc, status };
}

test('rows and files count; past the limit a write is refused with quota_exceeded, a delete or a shrink makes room', async () => {
  const { u, app, rpc, status } = await appFor();
  const fresh = await status();
  assert.is(fresh.usage['storage.bytes'], 0);
  assert.is(fresh.limits['storage.bytes'], 100_000);
  const limits = await h.api('GET /v0/accounts/{account_id}/limits', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(limits.usage_limits['storage.bytes.max'], 100_000);

  const rows = [];
  for (let i = 0; i < 3; i++) rows.push((await rpc('create', 30_000)).ok);
  assert.ok(
    rows.every((id) => typeof id === 'string'),
    JSON.stringify(rows),
  );
  const refused = await rpc('create', 30_000);
  assert.equal(
    [refused.error?.name, refused.error?.code],
    ['PlatformError', 'quota_exceeded'],
    JSON.stringify(refused),
  );
  assert.match(
    refused.error.message,
    /^Your Free plan stores 97\.7 KiB of app data and files; this account has 8\d\.\d KiB, and this would add 29\.3 KiB\. Delete rows or files it no longer needs or ask this server's operator for Starter \(195 KiB\) \(`npm run admin -- set-plan --account <account id> --plan starter`\)\.$/,
  );

  // the same over the wire, from a browser writing through the data API: 402 with the contract's details
  const viaBrowser = await h.call('POST', '/_platform/data/notes', {
    host: app.host,
    body: { body: 'w'.repeat(30_000) },
    headers: { origin: `http://${app.host}` },
  });
  assert.is(viaBrowser.status, 402, viaBrowser.text);
  assert.is(viaBrowser.body.error.code, 'quota_exceeded');
  const d = viaBrowser.body.error.details;
  assert.equal(
    { ...d, current: 0 },
    {
      metric: 'storage.bytes',
      plan_key: 'free',
      limit: 100_000,
      current: 0,
      increment: 30_011,
      upgrade_required: true,
    },
  );
  assert.ok(d.current > 90_000 && d.current < 100_000, String(d.current));
  assert.is(
    d.current,
    (await status()).usage['storage.bytes'],
    "the node's running count is what a fresh measure finds",
  );

  // an update that grows past the limit is refused; one that shrinks is not, and makes room
  assert.is((await rpc('update', rows[0], 45_000)).error?.code, 'quota_exceeded');
  assert.is((await rpc('update', rows[0], 10)).ok, rows[0]);
  assert.is(typeof (await rpc('create', 25_000)).ok, 'string');
  // a file counts at its size
  assert.is((await rpc('upload', 20_000)).error?.code, 'quota_exceeded');
  assert.equal((await rpc('delete', rows[1])).ok, { deleted: true });
  const file = (await rpc('upload', 20_000)).ok;
  assert.match(file, /^file_/);

  // the status measures what is stored now: rows 0 (10 bytes), 2 and the 25,000 one, and the file
  const now = await status();
  const stored = now.usage['storage.bytes'];
  assert.ok(stored > 75_000 && stored < 75_200, String(stored));
  assert.not.ok(
    now.warnings.some((w: { message: string }) => /app data/.test(w.message)),
    'under 80%: no warning',
  );
  // deleting the file gives its bytes back at once
  assert.equal((await rpc('unlink', file)).ok, { deleted: true });
  assert.is((await status()).usage['storage.bytes'], stored - 20_000);
  assert.is(typeof (await rpc('create', 20_000)).ok, 'string');
});

test("one account's quota does not touch another's, and an account over its limit still reads and deletes", async () => {
  const full = await appFor();
  const ids = [(await full.rpc('create', 60_000)).ok, (await full.rpc('create', 35_000)).ok];
  assert.is((await full.rpc('create', 10_000)).error?.code, 'quota_exceeded');
  const st = await full.status();
  assert.ok(
    st.warnings.some(
      (w: { code: string; message: string }) =>
        w.code === 'usage_near_limit' && /of 97\.7 KiB of app data and files used/.test(w.message),
    ),
    JSON.stringify(st.warnings),
  );
  const other = await appFor();
  assert.is(typeof (await other.rpc('create', 60_000)).ok, 'string');
  const read = await h.call('GET', '/_platform/data/notes?limit=10', { host: full.app.host });
  assert.is(read.status, 200);
  assert.is(read.body.rows.length, 2);
  assert.equal((await full.rpc('delete', ids[0])).ok, { deleted: true });
  assert.is(typeof (await full.rpc('create', 10_000)).ok, 'string');
});

test('moving to a plan that stores less: the preview says how much to delete, and the change is refused until it fits', async () => {
  const { u, rpc } = await appFor();
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
  const ids = [(await rpc('create', 60_000)).ok, (await rpc('create', 60_000)).ok];
  assert.ok(
    ids.every((id) => typeof id === 'string'),
    'Starter stores 200,000 bytes',
  );
  const preview = async () =>
    (await h.api('GET /v0/accounts/{account_id}/downgrade-preview', {
      key: u.api_key,
      params: { account_id: u.account_id },
      query: { plan: 'free' },
    })) as any;
  const before = await preview();
  assert.is(before.compatible, false);
  assert.equal(
    before.violations.map((v: any) => [v.key, v.current, v.allowed]),
    [['storage.bytes.max', 120_024, 100_000]],
  );
  assert.is(
    before.violations[0].message,
    'Free stores 97.7 KiB of app data and files; this account has 117 KiB. Delete 19.6 KiB of rows or files first.',
  );
  try {
    await setPlan(h.deps, { accountId: u.account_id, planKey: 'free' });
    assert.unreachable('the move was not refused');
  } catch (err) {
    assert.is((err as { code?: string }).code, 'downgrade_incompatible');
  }
  assert.equal((await rpc('delete', ids[0])).ok, { deleted: true });
  assert.is((await preview()).compatible, true);
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'free' });
});

test("each app's resources view says what its collections and stores hold, and the app's total, declared or not", async () => {
  const { u, app, rpc, status } = await appFor();
  const second = await publishServerApp(h, u.api_key, SERVER, { resources: RESOURCES });
  const view = async (appId: string) =>
    (await h.api('GET /v0/apps/{app_id}/resources', {
      key: u.api_key,
      params: { app_id: appId },
    })) as any;
  const usageOf = (v: any) =>
    Object.fromEntries(
      v.resources
        .filter((r: any) => r.usage)
        .map((r: any) => [`${r.resource_type}:${r.resource_name}`, r.usage]),
    );

  const empty = await view(app.appId);
  assert.equal(usageOf(empty), {
    'data:notes': { rows: 0, bytes: 0 },
    'files:docs': { files: 0, bytes: 0 },
  });
  assert.equal(empty.usage, { 'storage.bytes': 0 });
  assert.not.ok(
    empty.resources.find((r: any) => r.resource_type === 'auth').usage,
    'only collections and stores carry usage',
  );

  const ids = [
    (await rpc('create', 1000)).ok,
    (await rpc('create', 2000)).ok,
    (await rpc('create', 3000)).ok,
  ];
  await rpc('delete', ids[1]);
  await rpc('upload', 5000);
  await h.call('POST', '/rpc', { host: second.host, body: { op: 'create', args: [7000] } });
  const first = await view(app.appId);
  const notes = first.resources.find((r: any) => r.resource_name === 'notes').usage;
  assert.is(notes.rows, 2, 'a deleted row is not counted');
  assert.ok(notes.bytes > 4000 && notes.bytes < 4100, String(notes.bytes));
  assert.equal(first.resources.find((r: any) => r.resource_name === 'docs').usage, {
    files: 1,
    bytes: 5000,
  });
  assert.equal(first.usage, { 'storage.bytes': notes.bytes + 5000 });
  const other = await view(second.appId);
  assert.is(
    other.usage['storage.bytes'] + first.usage['storage.bytes'],
    (await status()).usage['storage.bytes'],
    "the apps' totals add up to the account's",
  );

  // a release that no longer declares the collection: its rows are kept and still count in the app's total
  const bare = await h.call('PUT', `/v0/apps/${app.appId}`, {
    key: u.api_key,
    body: site({ files: [file('public/index.html', 'gone')] }),
  });
  assert.is(bare.status, 200, bare.text);
  const after = await view(app.appId);
  assert.equal(usageOf(after), {});
  assert.equal(after.usage, first.usage);
  // unpublished: no live release, nothing declared, the same bytes still stored
  assert.is((await h.call('DELETE', `/v0/apps/${app.appId}`, { key: u.api_key })).status, 200);
  const gone = await view(app.appId);
  assert.equal([gone.resources, gone.usage], [[], first.usage]);
});

test.after(() => h.close());
test.run();

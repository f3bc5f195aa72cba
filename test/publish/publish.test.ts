import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { sql } from 'kysely';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, listen, newMember, newUser } from '../_lib/harness.ts';
import { waitFor } from '../_lib/apps.ts';
import { publishRoomHeld } from '../../src/apps/routes.ts';

const h = await createHarness();
const owner = await newUser(h, 'owner');

test('first publish creates the app and a live release', async () => {
  const r = await h.call('PUT', '/v0/apps', {
    key: owner.api_key,
    body: site({ message: 'first', provenance: { git_sha: 'abc' } }),
  });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.status, 'published');
  assert.match(r.body.app_id, /^[a-z0-9]{12,24}$/);
  assert.is(r.body.account_id, owner.account_id);
  assert.match(r.body.release_id, /^rel_/);
  assert.is(r.body.origin, `http://${r.body.app_id}.apps.localhost:8787`);
  assert.is(r.body.previous_release_id, null);
  assert.equal(r.body.activation, {
    status: 'live',
    reasons: [],
    missing_secrets: [],
    previous_release_id: null,
  });

  const list = await h.api('GET /v0/apps', { key: owner.api_key });
  const summary = list.apps.find((a) => a.app_id === r.body.app_id);
  if (!summary) throw new Error('the new app is listed');
  assert.is(summary.name, 'My site');
  assert.is(summary.visibility, 'public');
  assert.is(summary.live_release_id, r.body.release_id);
  assert.is(summary.deleted_at, null);

  const one = await h.call('GET', `/v0/apps/${r.body.app_id}`, { key: owner.api_key });
  assert.equal(one.body, summary);
});

test('publishing again creates another release; previous_release_id and releases list', async () => {
  const first = await h.call('PUT', '/v0/apps', { key: owner.api_key, body: site() });
  const appId = first.body.app_id;
  const second = await h.call('PUT', `/v0/apps/${appId}`, {
    key: owner.api_key,
    body: site({ app: { name: 'Renamed', summary: 'S' }, message: 'second' }),
  });
  assert.is(second.status, 200);
  assert.is(second.body.status, 'published');
  assert.is(second.body.app_id, appId);
  assert.is(second.body.previous_release_id, first.body.release_id);
  assert.is(second.body.activation.previous_release_id, first.body.release_id);
  const app = await h.call('GET', `/v0/apps/${appId}`, { key: owner.api_key });
  assert.is(app.body.name, 'Renamed');
  assert.is(app.body.summary, 'S');
  const rels = await h.call('GET', `/v0/apps/${appId}/releases`, { key: owner.api_key });
  assert.is(rels.status, 200);
  assert.is(rels.body.app_id, appId);
  assert.equal(
    rels.body.releases.map((x: { release_id: string }) => x.release_id),
    [second.body.release_id, first.body.release_id],
  );
  const [newest, oldest] = rels.body.releases;
  assert.equal(newest, {
    release_id: second.body.release_id,
    message: 'second',
    created_at: newest.created_at,
    activation_status: 'live',
    activation_error: null,
    is_live: true,
    created_by: {
      api_key_id: newest.created_by.api_key_id,
      key_prefix: owner.api_key.slice(0, 11),
      email: (
        await h.deps.db
          .selectFrom('users')
          .select('email')
          .where('id', '=', owner.user_id)
          .executeTakeFirstOrThrow()
      ).email,
    },
  });
  assert.match(newest.created_by.api_key_id, /^key_/);
  assert.is(oldest.activation_status, 'inactive');
  assert.is(oldest.is_live, false);
});

test('identical bytes are stored once across releases and apps of an account', async () => {
  const u = await newUser(h);
  const big = file('public/big.bin', Buffer.alloc(50_000, 7), 'application/octet-stream');
  const body = site({ files: [file('public/index.html', 'same'), big] });
  const a = await h.call('PUT', '/v0/apps', { key: u.api_key, body });
  await h.call('PUT', `/v0/apps/${a.body.app_id}`, { key: u.api_key, body });
  await h.call('PUT', '/v0/apps', { key: u.api_key, body });
  const { count } = await h.deps.db
    .selectFrom('blobs')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('account_id', '=', u.account_id)
    .executeTakeFirstOrThrow();
  assert.is(Number(count), 2);
  const files = await h.deps.db
    .selectFrom('release_files')
    .innerJoin('releases', 'releases.id', 'release_files.release_id')
    .innerJoin('apps', 'apps.id', 'releases.app_id')
    .select('release_files.path')
    .where('apps.account_id', '=', u.account_id)
    .execute();
  assert.is(files.length, 6);
});

test('X-Platform-Account-Id selects the account for new apps and the app list', async () => {
  const teamOwner = await newUser(h, 'team');
  const dev = await newMember(h, teamOwner.account_id, 'developer');
  const viewer = await newMember(h, teamOwner.account_id, 'viewer');
  const r = await h.call('PUT', '/v0/apps', {
    key: dev.api_key,
    account: teamOwner.account_id,
    body: site(),
  });
  assert.is(r.status, 200);
  assert.is(r.body.account_id, teamOwner.account_id);
  const teamList = await h.api('GET /v0/apps', {
    key: viewer.api_key,
    account: teamOwner.account_id,
  });
  assert.ok(teamList.apps.some((a) => a.app_id === r.body.app_id));
  const ownList = await h.api('GET /v0/apps', { key: dev.api_key });
  assert.not.ok(
    ownList.apps.some((a) => a.app_id === r.body.app_id),
    "default account is the developer's own",
  );
  const viewerPublish = await h.call('PUT', '/v0/apps', {
    key: viewer.api_key,
    account: teamOwner.account_id,
    body: site(),
  });
  assert.is(viewerPublish.status, 403);
  const stranger = await newUser(h);
  const hidden = await h.call('GET', '/v0/apps', {
    key: stranger.api_key,
    account: teamOwner.account_id,
  });
  assert.is(hidden.status, 404);
  const malformed = await h.call('GET', '/v0/apps', { key: stranger.api_key, account: 'team-1' });
  assert.is(malformed.status, 400);
  // The header cannot reach another account's app.
  const cross = await h.call('GET', `/v0/apps/${r.body.app_id}`, {
    key: stranger.api_key,
    account: teamOwner.account_id,
  });
  assert.is(cross.status, 404);
  const viewerRead = await h.call('GET', `/v0/apps/${r.body.app_id}/releases`, {
    key: viewer.api_key,
  });
  assert.is(
    viewerRead.status,
    200,
    'app-scoped routes authorise against the owning account, not the default',
  );
});

test('unpublish tombstones the app; GET shows deleted_at; list hides it; publishing restores it', async () => {
  const a = await h.call('PUT', '/v0/apps', { key: owner.api_key, body: site() });
  const del = await h.call('DELETE', `/v0/apps/${a.body.app_id}`, { key: owner.api_key });
  assert.is(del.status, 200);
  assert.is(del.body.app_id, a.body.app_id);
  assert.is(del.body.status, 'unpublished');
  assert.ok(Date.parse(del.body.deleted_at));
  const again = await h.call('DELETE', `/v0/apps/${a.body.app_id}`, { key: owner.api_key });
  assert.equal(again.body, del.body, 'idempotent');
  const got = await h.call('GET', `/v0/apps/${a.body.app_id}`, { key: owner.api_key });
  assert.is(got.status, 200);
  assert.is(got.body.deleted_at, del.body.deleted_at);
  assert.is(got.body.live_release_id, null);
  const list = await h.api('GET /v0/apps', { key: owner.api_key });
  assert.not.ok(list.apps.some((x) => x.app_id === a.body.app_id));
  const ev = await h.call('GET', `/v0/apps/${a.body.app_id}/events?type=app.unpublished`, {
    key: owner.api_key,
  });
  assert.is(ev.body.events.length, 1);
  const rels = await h.call('GET', `/v0/apps/${a.body.app_id}/releases`, { key: owner.api_key });
  assert.is(rels.body.releases[0].activation_status, 'inactive');
  const rb = await h.call('POST', `/v0/apps/${a.body.app_id}/rollback`, {
    key: owner.api_key,
    body: { release_id: a.body.release_id },
  });
  assert.is(rb.status, 409);
  const back = await h.call('PUT', `/v0/apps/${a.body.app_id}`, {
    key: owner.api_key,
    body: site(),
  });
  assert.is(back.body.status, 'published');
  assert.is(back.body.previous_release_id, null);
  const restored = await h.call('GET', `/v0/apps/${a.body.app_id}`, { key: owner.api_key });
  assert.is(restored.body.deleted_at, null);
});

test('concurrent publishes to one app never corrupt the live pointer or lose a release', async () => {
  const a = await h.call('PUT', '/v0/apps', { key: owner.api_key, body: site() });
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      h.call('PUT', `/v0/apps/${a.body.app_id}`, {
        key: owner.api_key,
        body: site({ message: `m${i}`, files: [file('public/index.html', `v${i}`)] }),
      }),
    ),
  );
  assert.ok(results.every((r) => r.status === 200 && r.body.status === 'published'));
  const rels = await h.api('GET /v0/apps/{app_id}/releases', {
    key: owner.api_key,
    params: { app_id: a.body.app_id },
  });
  assert.is(rels.releases.length, 9);
  assert.is(rels.releases.filter((x) => x.activation_status === 'live').length, 1);
  const app = await h.call('GET', `/v0/apps/${a.body.app_id}`, { key: owner.api_key });
  assert.is(
    app.body.live_release_id,
    rels.releases[0]!.release_id,
    'the last committed release is live',
  );
  // Each response's previous_release_id names a distinct earlier release: a chain, no forks.
  const previous = results.map((r) => r.body.previous_release_id);
  assert.is(new Set(previous).size, 8);
  const seqs = await sql<{
    seq: number;
  }>`select seq from releases where app_id = ${a.body.app_id} order by seq`.execute(h.deps.db);
  assert.equal(
    seqs.rows.map((r) => r.seq),
    [1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
});

test('app routes: auth matrix and roles', async () => {
  const teamOwner = await newUser(h);
  const a = await h.call('PUT', '/v0/apps', { key: teamOwner.api_key, body: site() });
  const id = a.body.app_id;
  const account = teamOwner.account_id;
  await checkAuthMatrix(h, { method: 'GET', path: '/v0/apps' });
  await checkAuthMatrix(h, { method: 'PUT', path: '/v0/apps', body: site() });
  await checkAuthMatrix(h, { method: 'GET', path: `/v0/apps/${id}` }, { ownerAccountId: account });
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${id}/releases` },
    { ownerAccountId: account },
  );
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${id}/resources` },
    { ownerAccountId: account },
  );
  await checkAuthMatrix(
    h,
    { method: 'PUT', path: `/v0/apps/${id}`, body: site() },
    { ownerAccountId: account, deniedRoles: ['viewer'] },
  );
  await checkAuthMatrix(
    h,
    { method: 'POST', path: `/v0/apps/${id}/rollback`, body: { release_id: a.body.release_id } },
    { ownerAccountId: account, deniedRoles: ['viewer'] },
  );
  await checkAuthMatrix(
    h,
    { method: 'DELETE', path: `/v0/apps/${id}` },
    { ownerAccountId: account, deniedRoles: ['viewer', 'developer'] },
  );
  const unknown = await h.call('GET', '/v0/apps/zzzzzzzzzzzzzzzz', { key: teamOwner.api_key });
  assert.is(unknown.status, 404);
  const malformed = await h.call('GET', '/v0/apps/NOT-AN-ID', { key: teamOwner.api_key });
  assert.is(malformed.status, 404);
  const stillLive = await h.call('GET', `/v0/apps/${id}`, { key: teamOwner.api_key });
  assert.is(stillLive.body.deleted_at, null, 'denied callers changed nothing');
});

test('publish bodies take room per account: a second large one while another arrives is 503 with Retry-After before it is read; the room comes back', async () => {
  const wire = await listen(h.server, 0, h.config);
  const large = 100 * 1024 * 1024;
  const head = (length: number) =>
    `PUT /v0/apps HTTP/1.1\r\nHost: ${h.config.hosts.api}\r\nAuthorization: Bearer ${owner.api_key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
  // a publish declaring 100 MiB whose sender stops after the first bytes
  const slow = net.connect(wire.port, '127.0.0.1');
  try {
    await once(slow, 'connect');
    slow.write(head(large) + '{"app":');
    await waitFor(async () => publishRoomHeld(owner.account_id) > 0); // its key checked, its room taken
    const second = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port: wire.port,
          method: 'PUT',
          path: '/v0/apps',
          headers: {
            host: h.config.hosts.api,
            authorization: `Bearer ${owner.api_key}`,
            'content-type': 'application/json',
            'content-length': large,
          },
          timeout: 5000,
        },
        resolve,
      );
      req.on('timeout', () =>
        req.destroy(new Error('no answer: the second publish was not refused')),
      );
      req.on('error', reject);
      req.flushHeaders(); // its body never comes: only a refusal can answer it
    });
    assert.is(second.statusCode, 503);
    let text = '';
    for await (const chunk of second) text += chunk;
    assert.is(JSON.parse(text).error.code, 'service_unavailable');
    assert.is(second.headers['retry-after'], '5');
    slow.destroy();
    // the sender gave up: its room is given back and the account publishes again
    const again = await waitFor(async () => {
      const r = await h.call('PUT', '/v0/apps', { key: owner.api_key, body: site() });
      return r.status === 200 && r;
    });
    assert.is(again.body.status, 'published');
  } finally {
    slow.destroy();
    await wire.close();
  }
});

test.after(() => h.close());
test.run();

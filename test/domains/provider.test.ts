/**
 * Custom domains through a hosting provider (Cloudflare for SaaS), against a loopback server that
 * speaks Cloudflare's v4 API: the custom hostname is created with the route (`ssl.method: txt`),
 * the route carries the provider's id, status, SSL status and validation records, verification
 * follows the provider's status, a hostname someone else holds is 409, and a provider failure is
 * 502 with no route left behind. Removal removes the provider's hostname too.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { setPlan } from '../../src/plans/operator.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { startFakeCloudflare } from '../_lib/fake-cloudflare.ts';

const TOKEN = 'cf-test-token-0123456789';
const ZONE = '0123456789abcdef0123456789abcdef';
const cf = await startFakeCloudflare({ token: TOKEN, zoneId: ZONE });
const h = await createHarness({
  PLATFORM_PLANS_FILE: '',
  CLOUDFLARE_API_TOKEN: TOKEN,
  CLOUDFLARE_ZONE_ID: ZONE,
  CLOUDFLARE_API_BASE: cf.apiBase,
  PLATFORM_CNAME_TARGET: 'customers.platform.test',
});

async function owner() {
  const u = await newUser(h);
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'business' });
  const pub = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({ files: [file('public/index.html', '<h1>provider page</h1>')] }),
  });
  return { ...u, appId: pub.body.app_id as string };
}
const add = (u: { api_key: string; appId: string }, hostname: string) =>
  h.answer('POST /v0/apps/{app_id}/domains', {
    key: u.api_key,
    params: { app_id: u.appId },
    body: { hostname },
  });
const routeRows = (hostname: string) =>
  h.deps.db
    .selectFrom('app_routes')
    .select(['id', 'status'])
    .where('hostname', '=', hostname)
    .execute();

test('creating a domain creates the custom hostname; verify follows the provider; removing removes it there', async () => {
  const u = await owner();
  const r = await add(u, 'shop.cf-one.test');
  assert.is(r.status, 201, r.text);
  const d = r.body!;
  const call = cf.calls.find((c) => c.method === 'POST')!;
  assert.is(call.auth, `Bearer ${TOKEN}`);
  assert.equal(call.body.hostname, 'shop.cf-one.test');
  assert.is(call.body.ssl.method, 'txt');
  const held = cf.hostnames.get('shop.cf-one.test')!;
  assert.equal(d.provider, {
    name: 'cloudflare',
    id: held.id,
    status: 'pending',
    ssl_status: 'pending_validation',
    validation_records: [
      {
        type: 'TXT',
        name: `_cf-custom-hostname.shop.cf-one.test`,
        value: held.ownership_verification.value,
      },
      {
        type: 'TXT',
        name: `_acme-challenge.shop.cf-one.test`,
        value: held.ssl.validation_records[0]!.txt_value,
      },
    ],
    verification_errors: ['custom hostname does not CNAME to this zone.'],
  });
  assert.is(d.verification!.name, '_cf-custom-hostname.shop.cf-one.test');
  assert.is(d.verification!.value, held.ownership_verification.value);
  const recs = d.dns_instructions!.records;
  assert.ok(recs.some((x) => x.type === 'CNAME' && x.value === 'customers.platform.test'));
  assert.ok(
    recs.some((x) => x.purpose === 'certificate' && x.name === '_acme-challenge.shop.cf-one.test'),
  );
  assert.ok(
    recs.some(
      (x) => x.purpose === 'verification' && x.name === '_cf-custom-hostname.shop.cf-one.test',
    ),
  );

  const verify = () =>
    h.answer('POST /v0/apps/{app_id}/domains/{hostname}/verify', {
      key: u.api_key,
      params: { app_id: u.appId, hostname: d.hostname },
      body: {},
    });
  const pending = await verify();
  assert.is(pending.status, 409);
  assert.is(pending.error?.code, 'domain_pending_verification');
  const check = (
    pending.error!.details!.checks as { check: string; ok: boolean; found: string[] }[]
  )[0]!;
  assert.is(check.check, 'provider');
  assert.ok(check.found.includes('hostname pending'));
  assert.ok(pending.error!.message.includes('does not CNAME'), pending.error!.message);

  cf.activate('shop.cf-one.test');
  const ok = await verify();
  assert.is(ok.status, 200, ok.text);
  assert.is(ok.body!.status, 'active');
  assert.is(ok.body!.provider!.status, 'active');
  assert.is(ok.body!.provider!.ssl_status, 'active');
  assert.is((await h.call('GET', '/', { host: 'shop.cf-one.test' })).status, 200);

  const removed = await h.api('DELETE /v0/apps/{app_id}/domains/{hostname}', {
    key: u.api_key,
    params: { app_id: u.appId, hostname: d.hostname },
  });
  assert.is(removed.status, 'deleted');
  assert.not.ok(cf.hostnames.has('shop.cf-one.test'), 'gone at the provider too');
});

test('a hostname that exists at the provider and is not ours is 409; nothing is created here', async () => {
  const u = await owner();
  cf.claim('taken.cf-two.test');
  const r = await add(u, 'taken.cf-two.test');
  assert.is(r.status, 409);
  assert.is(r.error?.code, 'custom_hostname_provider_conflict');
  assert.equal(await routeRows('taken.cf-two.test'), []);
});

test('a provider failure or a dropped connection is 502 and leaves no half-created route', async () => {
  const u = await owner();
  cf.failNext('status');
  const r = await add(u, 'fail.cf-three.test');
  assert.is(r.status, 502);
  assert.is(r.error?.code, 'custom_hostname_provider_failed');
  assert.ok(r.error!.message.includes('500'));
  assert.equal(await routeRows('fail.cf-three.test'), []);
  cf.failNext('drop');
  const dropped = await add(u, 'fail.cf-three.test');
  assert.is(dropped.status, 502);
  assert.is(dropped.error?.code, 'custom_hostname_provider_failed');
  assert.equal(await routeRows('fail.cf-three.test'), []);
  // and the plan-limit refusal happens before the provider is asked
  const calls = cf.calls.length;
  const again = await add(u, 'fail.cf-three.test');
  assert.is(again.status, 201, 'works once the provider answers');
  assert.is(cf.calls.length, calls + 1);
  // removal is refused (and the route kept) while the provider fails
  cf.failNext('status');
  const del = await h.answer('DELETE /v0/apps/{app_id}/domains/{hostname}', {
    key: u.api_key,
    params: { app_id: u.appId, hostname: 'fail.cf-three.test' },
  });
  assert.is(del.status, 502);
  assert.equal(
    (await routeRows('fail.cf-three.test')).map((x) => x.status),
    ['pending_dns'],
  );
});

test('a non-entitled account never reaches the provider', async () => {
  const u = await newUser(h);
  const pub = await h.call('PUT', '/v0/apps', { key: u.api_key, body: site() });
  const calls = cf.calls.length;
  const r = await h.answer('POST /v0/apps/{app_id}/domains', {
    key: u.api_key,
    params: { app_id: pub.body.app_id },
    body: { hostname: 'free.cf-four.test' },
  });
  assert.is(r.status, 402);
  assert.is(cf.calls.length, calls);
});

test.after(async () => {
  await h.close();
  await cf.close();
});
test.run();

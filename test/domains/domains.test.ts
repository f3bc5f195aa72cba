/**
 * Slugs and custom domains as an app owner and their visitors meet them: the plan's feature and
 * count, the names allowed, serving through an alias exactly as the canonical origin does,
 * `route_disabled` for pending, disabled and removed aliases, verification against a real DNS
 * server on loopback (dns2) with a diagnosis per check, the operator's verify, enabling and
 * disabling, downgrades, background re-checks and the TLS permission endpoint. Real catalogue.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sql } from 'kysely';
import { setPlan } from '../../src/plans/operator.ts';
import { operatorVerify, recheckDueDomains } from '../../src/domains/verify.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newMember, newUser } from '../_lib/harness.ts';
import { eventsOf } from '../_lib/apps.ts';
import { checkAuthMatrix } from '../_lib/auth-matrix.ts';
import { startDns } from '../_lib/dns-server.ts';

const dns = await startDns();
const TARGET = 'edge.platform.test';
const h = await createHarness({
  PLATFORM_PLANS_FILE: '',
  PLATFORM_DNS_SERVERS: dns.server,
  PLATFORM_CNAME_TARGET: TARGET,
  PLATFORM_TLS_ASK_TOKEN: 'ask-token-0123456789',
});
dns.set(TARGET, [{ type: 'A', value: '127.0.0.1' }]);

/** An owner on `plan` with one published app whose page says `text`. */
async function owner(plan: string, text = 'hello from the app') {
  const u = await newUser(h);
  if (plan !== 'free') await setPlan(h.deps, { accountId: u.account_id, planKey: plan });
  const pub = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({ files: [file('public/index.html', `<h1>${text}</h1>`)] }),
  });
  assert.is(pub.status, 200, pub.text);
  return { ...u, appId: pub.body.app_id as string };
}

const slugOf = (key: string, appId: string, slug: string) =>
  h.answer('POST /v0/apps/{app_id}/slugs', { key, params: { app_id: appId }, body: { slug } });
const domainOf = (key: string, appId: string, hostname: string) =>
  h.answer('POST /v0/apps/{app_id}/domains', {
    key,
    params: { app_id: appId },
    body: { hostname },
  });
const visit = (host: string, path = '/') => h.call('GET', path, { host });

test('Free has neither feature: 402 entitlement_required naming the plan that has it', async () => {
  const u = await owner('free');
  const s = await slugOf(u.api_key, u.appId, 'my-free-site');
  assert.is(s.status, 402);
  assert.is(s.error?.code, 'entitlement_required');
  assert.equal(s.error?.details, {
    plan_key: 'free',
    feature_key: 'app_slugs',
    required_plan_key: 'starter',
  });
  const d = await domainOf(u.api_key, u.appId, 'shop.free-example.test');
  assert.is(d.status, 402);
  assert.is(d.error?.details?.feature_key, 'custom_domains');
  const routes = await h.api('GET /v0/apps/{app_id}/routes', {
    key: u.api_key,
    params: { app_id: u.appId },
  });
  assert.equal(routes.routes, []);
});

test('a slug serves the app exactly as its canonical origin does, until it is removed (410)', async () => {
  const u = await owner('starter', 'slug page');
  const created = await slugOf(u.api_key, u.appId, 'My-Shop');
  assert.is(created.status, 201, created.text);
  const route = created.body!;
  assert.ok(route.route_id.startsWith('route_'));
  assert.is(route.route_type, 'slug');
  assert.is(route.slug, 'my-shop');
  assert.is(route.hostname, 'my-shop.apps.localhost');
  assert.is(route.status, 'active');
  assert.is(route.url, 'http://my-shop.apps.localhost:8787/');
  assert.is(route.verification, null);
  assert.is(route.dns_instructions, null);

  const canonical = await visit(`${u.appId}.apps.localhost`);
  const viaSlug = await visit('my-shop.apps.localhost');
  assert.is(viaSlug.status, 200);
  assert.is(viaSlug.text, canonical.text);
  assert.ok(viaSlug.text.includes('slug page'));
  assert.is(viaSlug.headers.get('etag'), canonical.headers.get('etag'));
  // /_platform/* is the app's too
  assert.is(
    (await visit('my-shop.apps.localhost', '/_platform/auth/session')).status,
    (await visit(`${u.appId}.apps.localhost`, '/_platform/auth/session')).status,
  );

  const slugs = await h.api('GET /v0/apps/{app_id}/slugs', {
    key: u.api_key,
    params: { app_id: u.appId },
  });
  assert.equal(
    slugs.slugs.map((s) => s.slug),
    ['my-shop'],
  );
  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.equal(status.route_counts, { slugs: 1, custom_domains: 0 });
  assert.is(status.usage.app_slugs, 1);

  // taken: by another app (another account) and by this app again
  const other = await owner('starter');
  const clash = await slugOf(other.api_key, other.appId, 'my-shop');
  assert.is(clash.status, 409);
  assert.is(clash.error?.code, 'conflict');
  assert.is((await slugOf(u.api_key, u.appId, 'my-shop')).status, 409);

  const removed = await h.api('DELETE /v0/apps/{app_id}/slugs/{slug}', {
    key: u.api_key,
    params: { app_id: u.appId, slug: 'my-shop' },
  });
  assert.is(removed.status, 'deleted');
  const gone = await visit('my-shop.apps.localhost');
  assert.is(gone.status, 410);
  assert.is(gone.body.error.code, 'route_disabled');
  assert.equal(gone.body.error.details, {
    route_id: route.route_id,
    route_type: 'slug',
    hostname: 'my-shop.apps.localhost',
    status: 'deleted',
  });
  assert.ok(!gone.text.includes('slug page'));
  assert.is(
    (await visit(`${u.appId}.apps.localhost`)).status,
    200,
    'the canonical origin keeps serving',
  );
  // the name is free again
  const again = await slugOf(other.api_key, other.appId, 'my-shop');
  assert.is(again.status, 201, again.text);
  assert.is((await visit('my-shop.apps.localhost')).status, 200);
  assert.is(
    (
      await h.answer('DELETE /v0/apps/{app_id}/slugs/{slug}', {
        key: u.api_key,
        params: { app_id: u.appId, slug: 'my-shop' },
      })
    ).status,
    404,
  );
  // an unknown slug host is simply not found
  const unknown = await visit('never-made.apps.localhost');
  assert.is(unknown.status, 404);
  assert.is(unknown.body.error.code, 'not_found');
});

test('slug names: DNS labels, not app-id shaped, not reserved', async () => {
  const u = await owner('starter');
  for (const bad of [
    'ab',
    '-abc',
    'abc-',
    'a_b_c',
    'has space',
    'x'.repeat(64),
    'abcdefghijkl',
    'www',
    'api',
    'console',
    'admin',
    'xn--abc',
    'ü-shop',
  ]) {
    const r = await slugOf(u.api_key, u.appId, bad);
    assert.is(r.status, 400, `${bad}: ${r.text}`);
    assert.is(r.error?.code, 'invalid_request');
  }
  for (const good of ['abc', 'shop-2', 'a'.repeat(63), 'abcdefghijk', 'abc-defghijklm']) {
    const r = await slugOf(u.api_key, u.appId, good);
    assert.is(r.status, 201, `${good}: ${r.text}`);
  }
  const missing = await h.call('POST', `/v0/apps/${u.appId}/slugs`, { key: u.api_key, body: {} });
  assert.is(missing.status, 400);
  const extra = await h.call('POST', `/v0/apps/${u.appId}/slugs`, {
    key: u.api_key,
    body: { slug: 'fine-one', x: 1 },
  });
  assert.is(extra.status, 400);
});

test('a custom domain starts pending_dns with a TXT challenge and the records to create; visitors get route_disabled', async () => {
  const u = await owner('starter', 'domain page');
  const r = await domainOf(u.api_key, u.appId, ' Shop.Example-One.TEST. ');
  assert.is(r.status, 201, r.text);
  const d = r.body!;
  assert.is(d.route_type, 'custom_domain');
  assert.is(d.hostname, 'shop.example-one.test');
  assert.is(d.status, 'pending_dns');
  assert.is(d.verification!.method, 'dns_txt');
  assert.is(d.verification!.name, '_platform-challenge.shop.example-one.test');
  assert.ok(d.verification!.value.includes(d.route_id), 'the value identifies the route');
  assert.is(d.verification!.verified_at, null);
  const recs = d.dns_instructions!.records;
  assert.equal(
    recs.find((x) => x.purpose === 'traffic'),
    {
      type: 'CNAME',
      name: 'shop.example-one.test',
      value: TARGET,
      purpose: 'traffic',
      required: true,
      note: null,
    },
  );
  assert.ok(
    recs.some(
      (x) =>
        x.type === 'TXT' && x.name === d.verification!.name && x.value === d.verification!.value,
    ),
  );
  assert.is(d.dns_instructions!.traffic_note, null);

  const pending = await visit('shop.example-one.test');
  assert.is(pending.status, 404);
  assert.is(pending.body.error.code, 'route_disabled');
  assert.equal(pending.body.error.details, {
    route_id: d.route_id,
    route_type: 'custom_domain',
    hostname: 'shop.example-one.test',
    status: 'pending_dns',
  });
  assert.ok(!pending.text.includes('domain page'));

  const one = await h.api('GET /v0/apps/{app_id}/domains/{hostname}', {
    key: u.api_key,
    params: { app_id: u.appId, hostname: 'SHOP.example-one.test' },
  });
  assert.is(one.route_id, d.route_id);
  const list = await h.api('GET /v0/apps/{app_id}/domains', {
    key: u.api_key,
    params: { app_id: u.appId },
  });
  assert.equal(
    list.domains.map((x) => x.hostname),
    ['shop.example-one.test'],
  );
  assert.is(
    (
      await h.answer('GET /v0/apps/{app_id}/domains/{hostname}', {
        key: u.api_key,
        params: { app_id: u.appId, hostname: 'nope.example-one.test' },
      })
    ).status,
    404,
  );

  // Starter allows one custom domain
  const second = await domainOf(u.api_key, u.appId, 'www.example-one.test');
  assert.is(second.status, 402);
  assert.is(second.error?.code, 'plan_limit_exceeded');
  assert.equal(second.error?.details, {
    limit_key: 'custom_domains.max',
    plan_key: 'starter',
    allowed: 1,
    current: 2,
    required_plan_key: 'business',
  });
  // claimed by another app
  const other = await owner('starter');
  const clash = await domainOf(other.api_key, other.appId, 'shop.example-one.test');
  assert.is(clash.status, 409);
});

test('an apex gets flattening or ALIAS/ANAME and the www record, never a plain apex CNAME; IDNA names are normalised', async () => {
  const u = await owner('business');
  const apex = (await domainOf(u.api_key, u.appId, 'example-apex.co.uk')).body!;
  const traffic = apex.dns_instructions!.records.filter((x) => x.purpose === 'traffic');
  assert.ok(traffic.length >= 1);
  assert.ok(
    traffic.every((x) => x.type !== 'CNAME'),
    'no CNAME at the apex',
  );
  assert.ok(
    /flattening/i.test(apex.dns_instructions!.traffic_note!) &&
      /ALIAS|ANAME/.test(apex.dns_instructions!.traffic_note!),
  );
  assert.equal(
    apex.dns_instructions!.records.find((x) => x.purpose === 'www'),
    {
      type: 'CNAME',
      name: 'www.example-apex.co.uk',
      value: TARGET,
      purpose: 'www',
      required: false,
      note: 'Add www.example-apex.co.uk as a domain of this app too, so both names serve it.',
    },
  );
  const idn = await domainOf(u.api_key, u.appId, 'Bücher.example-idn.test');
  assert.is(idn.status, 201, idn.text);
  assert.is(idn.body!.hostname, 'xn--bcher-kva.example-idn.test');
  // in a path, the name is normalised the same way: Unicode or punycode, any case, a trailing dot
  for (const spelled of ['B%C3%BCcher.Example-IDN.test.', 'XN--BCHER-KVA.example-idn.test']) {
    const read = await h.call('GET', `/v0/apps/${u.appId}/domains/${spelled}`, { key: u.api_key });
    assert.is(read.status, 200, `${spelled}: ${read.text}`);
    assert.is(read.body.hostname, 'xn--bcher-kva.example-idn.test');
  }
  for (const bad of [
    'localhost',
    'api.localhost',
    'console.localhost',
    'x.apps.localhost',
    'apps.localhost',
    'evil.console.localhost',
    'evil.api.localhost',
    'evil.docs.localhost',
    'a.b.Console.Localhost.',
    '127.0.0.1',
    '[::1]',
    'co.uk',
    'https://shop.example.test/',
    'shop.example.test:8443',
    'a..b.test',
    '*.example.test',
    'under_score-.test',
  ]) {
    const r = await domainOf(u.api_key, u.appId, bad);
    assert.is(r.status, 400, `${bad}: ${r.text}`);
  }
});

test('verify: 409 with what each check expected and found, then active once DNS is right', async () => {
  const u = await owner('starter', 'verified page');
  const d = (await domainOf(u.api_key, u.appId, 'www.verify-one.test')).body!;
  const verify = () =>
    h.answer('POST /v0/apps/{app_id}/domains/{hostname}/verify', {
      key: u.api_key,
      params: { app_id: u.appId, hostname: d.hostname },
      body: {},
    });

  let r = await verify();
  assert.is(r.status, 409);
  assert.is(r.error?.code, 'domain_pending_verification');
  let checks = r.error!.details!.checks as {
    check: string;
    ok: boolean;
    expected: string;
    found: string[];
    message: string;
  }[];
  const txt = checks.find((c) => c.check === 'txt')!;
  assert.is(txt.ok, false);
  assert.is(txt.expected, d.verification!.value);
  assert.equal(txt.found, []);
  assert.ok(txt.message.includes(`_platform-challenge.www.verify-one.test`));
  const cname = checks.find((c) => c.check === 'cname')!;
  assert.is(cname.ok, false);
  assert.is(cname.expected, TARGET);
  assert.ok(r.error!.message.includes('No TXT record'));

  // a wrong TXT value, a CNAME elsewhere, and a CAA that allows only another CA
  dns.set('_platform-challenge.www.verify-one.test', [{ type: 'TXT', value: 'something-else' }]);
  dns.set('www.verify-one.test', [{ type: 'CNAME', value: 'old-host.example.net' }]);
  dns.set('verify-one.test', [{ type: 'CAA', tag: 'issue', value: 'digicert.com' }]);
  r = await verify();
  assert.is(r.status, 409);
  checks = r.error!.details!.checks as typeof checks;
  assert.equal(checks.find((c) => c.check === 'txt')!.found, ['something-else']);
  assert.equal(checks.find((c) => c.check === 'cname')!.found, ['old-host.example.net']);
  const caa = checks.find((c) => c.check === 'caa')!;
  assert.is(caa.ok, false);
  assert.equal(caa.found, ['digicert.com']);
  assert.ok(caa.message.includes('letsencrypt.org'), caa.message);
  // the record keeps the last diagnosis
  const read = await h.api('GET /v0/apps/{app_id}/domains/{hostname}', {
    key: u.api_key,
    params: { app_id: u.appId, hostname: d.hostname },
  });
  assert.is(read.verification!.checks.length, 3);
  assert.ok(read.verification!.last_checked_at);

  // the right TXT, but CAA still forbids issuance: still pending
  dns.set('_platform-challenge.www.verify-one.test', [
    { type: 'TXT', value: d.verification!.value },
  ]);
  r = await verify();
  assert.is(r.status, 409);
  assert.ok(r.error!.message.includes('CAA'), r.error!.message);
  // fixed: CAA allows Let's Encrypt, CNAME to the target
  dns.set('verify-one.test', [{ type: 'CAA', tag: 'issue', value: 'letsencrypt.org' }]);
  dns.set('www.verify-one.test', [{ type: 'CNAME', value: TARGET }]);
  r = await verify();
  assert.is(r.status, 200, r.text);
  assert.is(r.body!.status, 'active');
  assert.ok(r.body!.verification!.verified_at);
  assert.ok(r.body!.verification!.checks.every((c) => c.ok));
  const served = await visit('www.verify-one.test');
  assert.is(served.status, 200);
  assert.ok(served.text.includes('verified page'));
  assert.is((await verify()).status, 200, 'verifying an active domain again is fine');
  assert.is((await eventsOf(h, u.api_key, u.appId, 'route.verified')).length, 1);
});

test("dns_verified is the operator's: 403 through the API; the admin command verifies without DNS", async () => {
  const u = await owner('starter', 'operator page');
  const d = (await domainOf(u.api_key, u.appId, 'intranet.operator-one.test')).body!;
  const r = await h.answer('POST /v0/apps/{app_id}/domains/{hostname}/verify', {
    key: u.api_key,
    params: { app_id: u.appId, hostname: d.hostname },
    body: { dns_verified: true },
  });
  assert.is(r.status, 403);
  assert.is(r.error?.code, 'forbidden');
  assert.ok(r.error!.message.includes('verify-domain'));
  assert.is((await visit(d.hostname)).status, 404);
  const out = await operatorVerify(h.deps, 'Intranet.Operator-One.test');
  assert.equal(out, {
    route_id: d.route_id,
    app_id: u.appId,
    hostname: d.hostname,
    status: 'active',
  });
  assert.is((await visit(d.hostname)).status, 200);
  const ev = (await eventsOf(h, u.api_key, u.appId, 'route.verified'))[0]!;
  assert.is(ev.metadata.operator, true);
});

test('owners disable and enable an alias; the canonical origin serves throughout', async () => {
  const u = await owner('starter', 'toggle page');
  const s = (await slugOf(u.api_key, u.appId, 'toggle-me')).body!;
  const patch = (status: string, id = s.route_id) =>
    h.answer('PATCH /v0/apps/{app_id}/routes/{route_id}', {
      key: u.api_key,
      params: { app_id: u.appId, route_id: id },
      body: { status: status as 'active' },
    });
  const off = await patch('disabled');
  assert.is(off.status, 200);
  assert.is(off.body!.status, 'disabled');
  const v = await visit('toggle-me.apps.localhost');
  assert.is(v.status, 404);
  assert.is(v.body.error.details.status, 'disabled');
  assert.is((await visit(`${u.appId}.apps.localhost`)).status, 200);
  const status = await h.api('GET /v0/accounts/{account_id}/status', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(status.route_counts.slugs, 1, 'a disabled route still holds its name, and counts');
  const on = await patch('active');
  assert.is(on.body!.status, 'active');
  assert.is((await visit('toggle-me.apps.localhost')).status, 200);
  for (const bad of ['disabled_downgrade', 'pending_dns', 'deleted'])
    assert.is((await patch(bad)).status, 400, bad);
  assert.is((await patch('active', 'route_nothere')).status, 404);
  // a never-verified domain comes back pending
  const d = (await domainOf(u.api_key, u.appId, 'toggle.example-two.test')).body!;
  assert.is((await patch('disabled', d.route_id)).body!.status, 'disabled');
  assert.is((await patch('active', d.route_id)).body!.status, 'pending_dns');
  const all = await h.api('GET /v0/apps/{app_id}/routes', {
    key: u.api_key,
    params: { app_id: u.appId },
  });
  assert.equal(
    all.routes.map((x) => [x.route_type, x.hostname, x.status]),
    [
      ['slug', 'toggle-me.apps.localhost', 'active'],
      ['custom_domain', 'toggle.example-two.test', 'pending_dns'],
    ],
  );
  assert.equal((await eventsOf(h, u.api_key, u.appId, 'route.disabled')).length, 2);
});

test('a downgrade disables exactly the routes its preview named; they answer route_disabled and need room to come back', async () => {
  const u = await owner('business', 'downgrade page');
  const slugs = [];
  for (const name of ['down-a', 'down-b'])
    slugs.push((await slugOf(u.api_key, u.appId, name)).body!);
  const doms = [];
  for (const name of ['a.down-one.test', 'b.down-one.test']) {
    const d = (await domainOf(u.api_key, u.appId, name)).body!;
    await operatorVerify(h.deps, name);
    doms.push(d);
  }
  const preview = await h.api('GET /v0/accounts/{account_id}/downgrade-preview', {
    key: u.api_key,
    params: { account_id: u.account_id },
    query: { plan: 'starter' },
  });
  assert.equal(
    preview.actions.map((a) => a.route_id),
    [doms[1]!.route_id],
    'Starter keeps 10 slugs and 1 domain: the newest domain goes',
  );
  const done = await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
  assert.equal(
    (done as { actions: { route_id: string }[] }).actions.map((a) => a.route_id),
    preview.actions.map((a) => a.route_id),
  );
  const v = await visit('b.down-one.test');
  assert.is(v.status, 404);
  assert.is(v.body.error.details.status, 'disabled_downgrade');
  assert.is((await visit('a.down-one.test')).status, 200);
  assert.is((await visit('down-b.apps.localhost')).status, 200);
  const back = await h.answer('PATCH /v0/apps/{app_id}/routes/{route_id}', {
    key: u.api_key,
    params: { app_id: u.appId, route_id: doms[1]!.route_id },
    body: { status: 'active' },
  });
  assert.is(back.status, 402);
  assert.is(back.error?.code, 'plan_limit_exceeded');
  // with room (the other domain removed) it comes back, verified, so active
  await h.api('DELETE /v0/apps/{app_id}/domains/{hostname}', {
    key: u.api_key,
    params: { app_id: u.appId, hostname: 'a.down-one.test' },
  });
  const again = await h.api('PATCH /v0/apps/{app_id}/routes/{route_id}', {
    key: u.api_key,
    params: { app_id: u.appId, route_id: doms[1]!.route_id },
    body: { status: 'active' },
  });
  assert.is(again.status, 'active');
  assert.is((await visit('b.down-one.test')).status, 200);
});

test('unpublishing an app removes its aliases (410) and frees their names', async () => {
  const u = await owner('starter');
  await slugOf(u.api_key, u.appId, 'short-lived');
  assert.is((await visit('short-lived.apps.localhost')).status, 200);
  assert.is((await h.call('DELETE', `/v0/apps/${u.appId}`, { key: u.api_key })).status, 200);
  const v = await visit('short-lived.apps.localhost');
  assert.is(v.status, 410);
  assert.is(v.body.error.code, 'route_disabled');
  const other = await owner('starter');
  assert.is((await slugOf(other.api_key, other.appId, 'short-lived')).status, 201);
});

test('pending domains are re-checked in the background with growing gaps, for 7 days', async () => {
  const u = await owner('starter', 'rechecked page');
  const d = (await domainOf(u.api_key, u.appId, 'later.recheck-one.test')).body!;
  const row = () =>
    h.deps.db
      .selectFrom('app_routes')
      .select(['status', 'next_check_at', 'check_attempts'])
      .where('id', '=', d.route_id)
      .executeTakeFirstOrThrow();
  const first = await row();
  assert.ok(first.next_check_at, 'a check is scheduled');
  // not due yet: nothing happens
  let out = await recheckDueDomains(h.deps, new Date());
  assert.is((await row()).check_attempts, 0);
  // due, DNS still missing: attempts grow and the gap widens
  const t1 = new Date(first.next_check_at!.getTime() + 1000);
  out = await recheckDueDomains(h.deps, t1);
  assert.ok(out.checked >= 1);
  const second = await row();
  assert.is(second.check_attempts, 1);
  assert.is(second.status, 'pending_dns');
  // the DNS arrives: the next due check activates it
  dns.set('_platform-challenge.later.recheck-one.test', [
    { type: 'TXT', value: d.verification!.value },
  ]);
  await recheckDueDomains(h.deps, new Date(second.next_check_at!.getTime() + 1000));
  assert.is((await row()).status, 'active');
  assert.is((await visit('later.recheck-one.test')).status, 200);

  // another that never verifies: released after 7 days, with an event
  const never = (
    await h.api('GET /v0/apps/{app_id}/routes', { key: u.api_key, params: { app_id: u.appId } })
  ).routes.length;
  assert.is(never, 1);
  await h.api('DELETE /v0/apps/{app_id}/domains/{hostname}', {
    key: u.api_key,
    params: { app_id: u.appId, hostname: 'later.recheck-one.test' },
  });
  const n = (await domainOf(u.api_key, u.appId, 'never.recheck-one.test')).body!;
  await sql`update app_routes set created_at = now() - interval '7 days', next_check_at = now() - interval '1 second' where id = ${n.route_id}`.execute(
    h.deps.db,
  );
  await recheckDueDomains(h.deps, new Date());
  const stopped = await h.deps.db
    .selectFrom('app_routes')
    .select(['status', 'next_check_at'])
    .where('id', '=', n.route_id)
    .executeTakeFirstOrThrow();
  assert.is(stopped.status, 'deleted', 'the name is released');
  assert.is(stopped.next_check_at, null);
  const released = await eventsOf(h, u.api_key, u.appId, 'route.released');
  assert.is(released.length, 1);
  assert.match(released[0]!.message, 'not verified within 7 days and was released');
  // and anyone may add it now
  const other = await owner('starter');
  assert.is((await domainOf(other.api_key, other.appId, 'never.recheck-one.test')).status, 201);
});

test('every name an account holds counts against its plan, disabled or unverified (no squatting)', async () => {
  const u = await owner('starter'); // 1 custom domain
  const first = (await domainOf(u.api_key, u.appId, 'kept.squat-one.test')).body!;
  const off = await h.answer('PATCH /v0/apps/{app_id}/routes/{route_id}', {
    key: u.api_key,
    params: { app_id: u.appId, route_id: first.route_id },
    body: { status: 'disabled' },
  });
  assert.is(off.body!.status, 'disabled');
  const second = await domainOf(u.api_key, u.appId, 'second.squat-one.test');
  assert.is(second.status, 402, 'the disabled domain still holds a name');
  assert.is(second.error?.code, 'plan_limit_exceeded');
  assert.match(second.error!.message, 'disabled and unverified ones count');
  // the one it holds can come back: enabling counts what serves
  const on = await h.answer('PATCH /v0/apps/{app_id}/routes/{route_id}', {
    key: u.api_key,
    params: { app_id: u.appId, route_id: first.route_id },
    body: { status: 'active' },
  });
  assert.is(on.body!.status, 'pending_dns');
});

test("the name's DNS owner takes it over from another account with a TXT record; the loser is told", async () => {
  const squatter = await owner('starter');
  const held = (await domainOf(squatter.api_key, squatter.appId, 'shop.takeover-one.test')).body!;
  assert.is(held.status, 'pending_dns');
  const realOwner = await owner('starter');
  const refused = await domainOf(realOwner.api_key, realOwner.appId, 'shop.takeover-one.test');
  assert.is(refused.status, 409);
  const challenge = refused.error!.details!.takeover as { name: string; value: string };
  assert.is(challenge.name, '_platform-takeover.shop.takeover-one.test');
  assert.match(challenge.value, /^platform-takeover=[A-Za-z0-9_-]{32}$/);
  assert.match(refused.error!.message, challenge.value);
  // a record with another value proves nothing
  dns.set(challenge.name, [{ type: 'TXT', value: 'platform-takeover=not-the-value' }]);
  assert.is(
    (await domainOf(realOwner.api_key, realOwner.appId, 'shop.takeover-one.test')).status,
    409,
  );
  dns.set(challenge.name, [{ type: 'TXT', value: challenge.value }]);
  const won = await domainOf(realOwner.api_key, realOwner.appId, 'shop.takeover-one.test');
  assert.is(won.status, 201, won.text);
  assert.is(won.body!.status, 'pending_dns', 'it still verifies as any new domain does');
  const left = await h.api('GET /v0/apps/{app_id}/routes', {
    key: squatter.api_key,
    params: { app_id: squatter.appId },
  });
  assert.equal(left.routes, [], "the squatter's route is gone");
  const told = await eventsOf(h, squatter.api_key, squatter.appId, 'route.taken_over');
  assert.is(told.length, 1);
  assert.is(told[0]!.severity, 'warn');
  assert.match(told[0]!.message, 'proved through DNS');
});

test('the TLS ask endpoint says yes only for names this platform serves', async () => {
  const u = await owner('starter');
  await slugOf(u.api_key, u.appId, 'tls-slug');
  const d = (await domainOf(u.api_key, u.appId, 'secure.tls-one.test')).body!;
  const ask = (domain: string, token = 'ask-token-0123456789') =>
    h.call('GET', `/_internal/tls/permission?domain=${encodeURIComponent(domain)}&token=${token}`);
  assert.is((await ask('secure.tls-one.test')).status, 404, 'pending: no certificate yet');
  await operatorVerify(h.deps, d.hostname);
  const yes = await ask('secure.tls-one.test');
  assert.is(yes.status, 200);
  assert.equal(yes.body, { domain: 'secure.tls-one.test', allowed: true, kind: 'custom_domain' });
  assert.is((await ask('tls-slug.apps.localhost')).body.kind, 'slug');
  assert.is((await ask(`${u.appId}.apps.localhost`)).body.kind, 'app_origin');
  assert.is((await ask('api.localhost')).body.kind, 'platform');
  for (const no of [
    'unknown.example.test',
    'zzzzzzzzzzzzzzzz.apps.localhost',
    'nope-slug.apps.localhost',
    'a.b.apps.localhost',
  ])
    assert.is((await ask(no)).status, 404, no);
  assert.is((await ask('secure.tls-one.test', 'wrong-token-000000000')).status, 403);
  assert.is(
    (await h.call('GET', '/_internal/tls/permission?domain=secure.tls-one.test')).status,
    403,
  );
  assert.is((await h.call('GET', '/_internal/tls/permission?token=x')).status, 400);
});

test('who may manage routes: members read, developers and up write, strangers see nothing', async () => {
  const u = await owner('starter');
  await checkAuthMatrix(
    h,
    { method: 'POST', path: `/v0/apps/${u.appId}/slugs`, body: { slug: 'auth-matrix' } },
    { ownerAccountId: u.account_id, deniedRoles: ['viewer'] },
  );
  await checkAuthMatrix(
    h,
    { method: 'GET', path: `/v0/apps/${u.appId}/routes` },
    { ownerAccountId: u.account_id },
  );
  const viewer = await newMember(h, u.account_id, 'viewer');
  assert.is(
    (await h.call('GET', `/v0/apps/${u.appId}/domains`, { key: viewer.api_key })).status,
    200,
  );
  const dev = await newMember(h, u.account_id, 'developer');
  assert.is((await slugOf(dev.api_key, u.appId, 'dev-made')).status, 201);
});

test.after(async () => {
  await h.close();
  await dns.close();
});
test.run();

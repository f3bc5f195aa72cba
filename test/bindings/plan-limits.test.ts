/**
 * Bindings count against the account's plan: a queue holds at most the plan's `queues.waiting.max`
 * messages, and one call makes at most its `bindings.operations.max` binding operations (Workers'
 * own refusal past it). A plans file sets Free's bounds low; the upgrade shows in the details.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const plansFile = path.join(tmpdir(), `plans-bindings-${process.pid}.json`);
writeFileSync(
  plansFile,
  JSON.stringify({ free: { limits: { 'queues.waiting.max': 3, 'bindings.operations.max': 5 } } }),
);
const h = await createHarness({ PLATFORM_PLANS_FILE: plansFile });
const u = await newUser(h);

const SERVER = `const attempt = async (fn) => {
  try { return { ok: await fn() }; } catch (e) { return { name: e.name, message: e.message, code: e.code ?? null }; }
};
export default { async fetch(request, env) {
  const path = new URL(request.url).pathname;
  if (path === '/send') return Response.json(await attempt(async () => (await env.Q.send({ at: Date.now() }), 'sent')));
  // five operations are allowed; the sixth is refused
  const seen = [];
  for (let i = 0; i < 7; i++) seen.push(await attempt(() => env.KV.get('k' + i)));
  return Response.json(seen);
} };`;

const r = await h.call('PUT', '/v0/apps', {
  key: u.api_key,
  body: site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    files: [
      file('public/index.html', 'x'),
      file('server.js', SERVER, 'text/javascript'),
      file(
        '.platform/bindings.json',
        JSON.stringify({
          kv_namespaces: [{ binding: 'KV' }],
          queues: { producers: [{ binding: 'Q', queue: 'jobs' }] },
        }),
        'application/json',
      ),
    ],
  }),
});
assert.is(r.body.status, 'published', r.text);
const host = `${r.body.app_id}.apps.localhost`;

test("a queue holds at most the plan's queues.waiting.max messages", async () => {
  const sent = [];
  for (let i = 0; i < 4; i++) sent.push((await h.call('GET', '/send', { host })).body);
  assert.equal(sent.slice(0, 3), [{ ok: 'sent' }, { ok: 'sent' }, { ok: 'sent' }]);
  assert.is(sent[3].code, 'quota_exceeded');
  assert.match(sent[3].message, 'Queue jobs holds 3 messages; Free allows 3 waiting in one queue');
  const limits = await h.api('GET /v0/accounts/{account_id}/limits', {
    key: u.api_key,
    params: { account_id: u.account_id },
  });
  assert.is(limits.runtime_limits['queues.waiting.max'], 3);
});

test("one call makes at most the plan's bindings.operations.max operations", async () => {
  const seen = (await h.call('GET', '/ops', { host })).body as { ok?: unknown; message?: string }[];
  assert.equal(
    seen.slice(0, 5).map((s) => s.ok),
    [null, null, null, null, null],
  );
  for (const refused of seen.slice(5))
    assert.is(refused.message, 'Too many API requests by single Worker invocation.');
  // the next call has its own count
  const next = (await h.call('GET', '/ops', { host })).body as { ok?: unknown }[];
  assert.is(next[0]!.ok, null);
});

test.after(() => h.close());
test.run();

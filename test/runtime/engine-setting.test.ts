/**
 * PLATFORM_ENGINE picks the QuickJS build app code runs on: the platform's own by default (on Node),
 * where AsyncLocalStorage keeps a request's store across `await`, or `stock`, where it holds for
 * run()'s synchronous part only; any other value stops start-up naming the variable.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { onDeno } from '../../src/lib/on-deno.ts';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const APP = `const { AsyncLocalStorage } = globalThis[Symbol.for('platform.async_hooks')];
const store = new AsyncLocalStorage();
export default { fetch(req) {
  return store.run(new URL(req.url).pathname, async () => {
    const before = store.getStore();
    await new Promise((r) => setTimeout(r, 5));
    return Response.json({ before, after: store.getStore() ?? null });
  });
} };`;

async function answer(env: Record<string, string>) {
  const h = await createHarness(env);
  try {
    const u = await newUser(h);
    const app = await publishServerApp(h, u.api_key, APP);
    const r = await h.call('GET', '/request-a', { host: app.host });
    assert.is(r.status, 200, r.text);
    return { engine: h.server.runtime.sandbox().engine.name, body: JSON.parse(r.text) };
  } finally {
    await h.close();
  }
}

test('the own engine (the default on Node) keeps a store across await; PLATFORM_ENGINE=stock does not', async () => {
  const own = await answer(onDeno ? { PLATFORM_ENGINE: 'own' } : {});
  assert.is(own.engine, 'own');
  assert.equal(own.body, { before: '/request-a', after: '/request-a' });
  const stock = await answer({ PLATFORM_ENGINE: 'stock' });
  assert.is(stock.engine, 'stock');
  assert.equal(stock.body, { before: '/request-a', after: null });
});

test('a PLATFORM_ENGINE other than own or stock is refused, naming it', () => {
  assert.throws(
    () => loadConfig({ PLATFORM_ENGINE: 'v8' }),
    (err: unknown) =>
      err instanceof ConfigError && /PLATFORM_ENGINE: must be own or stock/.test(String(err)),
  );
});

test.run();

/**
 * The real-handlers fixtures (hono/jsx, marked, a JSON POST, jose, zod, hono routing; see
 * test/fixtures/real-handlers/README.md), each bundled once: the platform answers every one with
 * the status, content type and bytes the same bundle gives in Node. `npm run bench:real` times them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { publishServerApp } from '../_lib/apps.ts';
import { createHarness, newUser } from '../_lib/harness.ts';
import { bundleHandler, HANDLERS } from '../_lib/real-handlers.ts';

const h = await createHarness();
const key = (await newUser(h)).api_key;
const dir = await mkdtemp(path.join(tmpdir(), 'real-handlers-'));

for (const handler of HANDLERS) {
  test(`${handler.name}: the platform answers as Node does`, async () => {
    const source = await bundleHandler(handler);
    const file = path.join(dir, `${handler.file}.mjs`);
    await writeFile(file, source);
    const mod = (await import(pathToFileURL(file).href)) as {
      default: { fetch(r: Request, env: unknown, ctx: unknown): Promise<Response> | Response };
    };
    const init = {
      method: handler.method,
      headers: (handler.contentType ? { 'content-type': handler.contentType } : {}) as Record<
        string,
        string
      >,
      ...(handler.body ? { body: handler.body } : {}),
    };
    const expected = await mod.default.fetch(
      new Request(`http://app.test${handler.path}`, init),
      {},
      { waitUntil() {}, passThroughOnException() {} },
    );
    const app = await publishServerApp(h, key, source, { index: null });
    const got = await h.call(handler.method, handler.path, {
      host: app.host,
      headers: init.headers,
      ...(handler.body ? { rawBody: handler.body } : {}),
    });
    assert.is(got.status, expected.status);
    assert.is(got.headers.get('content-type'), expected.headers.get('content-type'));
    const text = await expected.text();
    assert.ok(got.text === text, `${handler.name}: ${got.text.slice(0, 200)}`);
  });
}

test.after(async () => {
  await rm(dir, { recursive: true, force: true });
  await h.close();
});
test.run();

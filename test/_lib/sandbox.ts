/** Calls into a SandboxPool the way the app origin makes them, for the sandbox's own tests. */
import * as assert from 'uvu/assert';
import type { InvocationResult } from '../../src/sandbox/protocol.ts';
import type { InvokeInput, SandboxPool } from '../../src/sandbox/pool.ts';

/** A GET to `path` answered by the release `releaseId`, whose server.js is `source`. */
export function invokeSource(
  pool: SandboxPool,
  releaseId: string,
  source: string,
  path = '/',
  limits?: InvokeInput['limits'],
): Promise<InvocationResult> {
  return pool.invoke({
    handler: 'fetch',
    app: {
      app_id: `app_${releaseId}`,
      origin: `http://app_${releaseId}.apps.localhost`,
      release_id: releaseId,
    },
    release: { releaseId, entry: 'server.js' },
    loadSources: async () => ({ 'server.js': source }),
    request: {
      method: 'GET',
      url: `http://app_${releaseId}.apps.localhost${path}`,
      headers: [['host', `app_${releaseId}.apps.localhost`]],
    },
    secrets: {},
    limits,
  });
}

/** The answer's body as text. */
export const answerText = (r: InvocationResult): string =>
  r.response?.text ?? new TextDecoder().decode(r.response?.body ?? new ArrayBuffer(0));

/** Calls releases whose server.js is `source(name)` and answers JSON; fails the test on an error. */
export function jsonCaller<T>(
  pool: SandboxPool,
  source: (name: string) => string,
): (name: string) => Promise<T> {
  return async (name) => {
    const r = await invokeSource(pool, name, source(name));
    assert.ok(r.ok, JSON.stringify(r.error));
    return JSON.parse(answerText(r)) as T;
  };
}

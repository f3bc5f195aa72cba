/**
 * Miniflare (the devDependency `miniflare`, what `wrangler dev` runs) serving one Worker module
 * with its bindings in memory: the control the platform's bindings are compared with.
 */
import { readFile } from 'node:fs/promises';
import { Miniflare } from 'miniflare';

export type Control = {
  fetch(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
};

export async function startMiniflare(
  scriptFile: string,
  bindings: {
    kvNamespaces?: string[];
    r2Buckets?: string[];
    d1Databases?: string[];
    queueProducers?: Record<string, { queueName: string }>;
    queueConsumers?: Record<string, Record<string, unknown>>;
  },
): Promise<Control> {
  const mf = new Miniflare({
    modules: true,
    script: await readFile(scriptFile, 'utf8'),
    compatibilityDate: '2024-09-23',
    ...bindings,
  } as never);
  await mf.ready;
  return {
    fetch: async (path, init) => {
      const r = await mf.dispatchFetch(`http://localhost${path}`, init as never);
      return new Response(await r.arrayBuffer(), {
        status: r.status,
        headers: [...r.headers] as [string, string][],
      });
    },
    stop: () => mf.dispose(),
  };
}

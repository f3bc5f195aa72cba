/** Bundles a server module that imports npm packages (as an app's build would) into one ES module for the sandbox. */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `external`: imports left for the runtime (`cloudflare:*` for a workerd control). */
export async function bundleModule(source: string, external: string[] = []): Promise<string> {
  const r = await build({
    stdin: { contents: source, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['worker', 'browser'],
    target: 'es2022',
    logLevel: 'silent',
    external,
  });
  return r.outputFiles[0]!.text;
}

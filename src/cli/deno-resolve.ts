/**
 * Deno and Val Town module resolution in the bundle step: `deno.json`'s import map (exact names and
 * `prefix/` entries), `npm:` specifiers (the package as installed in node_modules), `jsr:`
 * specifiers (the package as `deno install` or npm's JSR registry lays it out, `@jsr/scope__name`),
 * and its JSX settings. A remote `https://` import cannot be fetched at run time: a static one stops
 * the build with one line saying what to do; a dynamic `import()` is left to fail when it runs.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BuildOptions, Plugin } from 'esbuild';
import { parse as parseJsonc } from 'jsonc-parser';

type DenoConfig = {
  imports?: Record<string, string>;
  compilerOptions?: {
    jsx?: string;
    jsxImportSource?: string;
    jsxFactory?: string;
    jsxFragmentFactory?: string;
  };
};

function readDenoConfig(root: string): DenoConfig | undefined {
  for (const name of ['deno.json', 'deno.jsonc']) {
    try {
      const v = parseJsonc(readFileSync(path.join(root, name), 'utf8'), [], {
        allowTrailingComma: true,
      });
      if (v && typeof v === 'object') return v as DenoConfig;
    } catch {
      // not there
    }
  }
  return undefined;
}

/** `npm:name@version/sub` or `jsr:@scope/name@version/sub` as the bare specifier node_modules answers. */
export function bareOf(specifier: string): string | undefined {
  const m = /^(npm|jsr):\/?((?:@[^/@]+\/)?[^/@]+)(?:@[^/]*)?(\/.*)?$/.exec(specifier);
  if (!m) return undefined;
  const [, kind, name, sub = ''] = m;
  if (kind === 'npm') return `${name}${sub}`;
  // JSR packages installed for Node live under @jsr/<scope>__<name>
  const jsr = /^@([^/]+)\/(.+)$/.exec(name!);
  return jsr ? `@jsr/${jsr[1]}__${jsr[2]}${sub}` : undefined;
}

/** The esbuild options and plugin for a folder (its deno.json, if any). */
export function denoResolution(root: string): { plugin: Plugin; options: Partial<BuildOptions> } {
  const config = readDenoConfig(root);
  const imports = Object.entries(config?.imports ?? {}).sort((a, b) => b[0].length - a[0].length);
  const mapped = (spec: string): string | undefined => {
    for (const [key, target] of imports) {
      if (spec === key) return target;
      if (key.endsWith('/') && spec.startsWith(key)) return target + spec.slice(key.length);
    }
    // a package entry (`"hono": "jsr:@hono/hono@^4"`) maps its subpaths too (`hono/html`), as Deno does
    for (const [key, target] of imports)
      if (!key.endsWith('/') && spec.startsWith(`${key}/`) && /^(npm|jsr):/.test(target))
        return target.replace(/\/+$/, '') + spec.slice(key.length);
    return undefined;
  };
  const plugin: Plugin = {
    name: 'platform-deno-resolution',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'deno-resolved') return undefined;
        let spec = args.path;
        const fromMap =
          imports.length && !args.importer.includes('node_modules') ? mapped(spec) : undefined;
        if (fromMap !== undefined) {
          spec = fromMap;
          if (spec.startsWith('./') || spec.startsWith('../'))
            return build.resolve(path.resolve(root, spec), {
              kind: args.kind,
              resolveDir: root,
              pluginData: 'deno-resolved',
            });
        }
        // a dynamic import is a choice made when it runs (a fallback in try/catch): it fails there,
        // as on any host without network imports; only a static one must stop the build
        if (/^https?:\/\//.test(spec) && args.kind === 'dynamic-import')
          return { path: spec, external: true };
        if (/^https?:\/\//.test(spec))
          return {
            errors: [
              {
                text: `"${spec}" is a remote import, which cannot be fetched at run time here: use the package from npm or JSR (installed in node_modules), or copy the module into the project.`,
              },
            ],
          };
        if (spec.startsWith('npm:') || spec.startsWith('jsr:')) {
          const bare = bareOf(spec);
          if (!bare)
            return { errors: [{ text: `"${spec}" is not a specifier this build understands.` }] };
          const found = await build.resolve(bare, {
            kind: args.kind,
            resolveDir: args.resolveDir,
            pluginData: 'deno-resolved',
          });
          if (found.errors.length)
            return {
              errors: [
                {
                  text: `"${spec}" is not installed in node_modules (looked for ${bare}): run \`deno install\` or \`npm install\` in the project first.`,
                },
              ],
            };
          return found;
        }
        if (fromMap !== undefined)
          return build.resolve(spec, {
            kind: args.kind,
            resolveDir: args.resolveDir,
            pluginData: 'deno-resolved',
          });
        return undefined;
      });
    },
  };
  const co = config?.compilerOptions ?? {};
  const options: Partial<BuildOptions> =
    co.jsx === 'react-jsx' || co.jsx === 'react-jsxdev' || co.jsx === 'precompile'
      ? { jsx: 'automatic', ...(co.jsxImportSource ? { jsxImportSource: co.jsxImportSource } : {}) }
      : co.jsxFactory
        ? {
            jsxFactory: co.jsxFactory,
            ...(co.jsxFragmentFactory ? { jsxFragment: co.jsxFragmentFactory } : {}),
          }
        : {};
  return { plugin, options };
}

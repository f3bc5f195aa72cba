/**
 * Node's built-in modules in server code, as Cloudflare's `nodejs_compat` offers them: each
 * `node:*` (or bare) import of a module that has a meaning here is bundled from a well-kept polyfill
 * (unenv, which Cloudflare and Nitro use; `stream`, `events`, `string_decoder` and `assert` from
 * their npm packages, Node's own code as readable-stream and events ship it;
 * `crypto` and `process` from ./crypto.js and ./process.js over the sandbox); Node's globals
 * (`Buffer`, `setImmediate`, `process`) are the sandbox's own. A module with no meaning here (no file system,
 * sockets or processes) stops the build with one line naming it and what to use instead, unless
 * the project's wrangler config asks for `nodejs_compat`: then it is unenv's stub, as Workers give
 * it (it loads; a call fails when it runs, naming the function), and the publish says which.
 * `@hono/node-server`, which starts a Node server, makes the app's fetch its handler instead
 * (./hono-node-server.js).
 */
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { defineEnv } from 'unenv';

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const require = createRequire(import.meta.url);

const NO_FILES =
  "there is no file system here: read the release's own files with ctx.assets.fetch(), keep data with ctx.data and files with ctx.files";
const NO_SOCKETS = 'there are no sockets here: use fetch()';
const NO_PROCESSES =
  'there are no processes or threads here: use jobs (ctx.jobs.enqueue) for work in the background';
/** Modules with no meaning in the sandbox, and what to use instead. */
export const NO_MEANING: Record<string, string> = {
  fs: NO_FILES,
  'fs/promises': NO_FILES,
  net: NO_SOCKETS,
  tls: NO_SOCKETS,
  dgram: NO_SOCKETS,
  http: 'use fetch() to make requests, and export a fetch handler to answer them',
  https: 'use fetch() to make requests, and export a fetch handler to answer them',
  http2: 'use fetch() to make requests, and export a fetch handler to answer them',
  dns: 'fetch() resolves names itself',
  child_process: NO_PROCESSES,
  cluster: NO_PROCESSES,
  worker_threads: NO_PROCESSES,
  vm: 'code cannot be compiled at run time here',
  v8: 'the engine here is QuickJS, not V8',
  inspector: 'there is no debugger protocol here',
  repl: 'there is no terminal here',
  readline: 'there is no terminal here',
  tty: 'there is no terminal here',
  zlib: 'use CompressionStream and DecompressionStream (gzip, deflate)',
  sqlite: 'use data collections (ctx.data)',
};

const OWN: Record<string, string> = {
  crypto: here('./crypto.js'),
  process: here('./process.js'),
  async_hooks: here('./async-hooks.js'),
  module: here('./module.js'),
  string_decoder: require.resolve('string_decoder/'),
  assert: require.resolve('assert/'),
  stream: require.resolve('readable-stream'),
  // Node's EventEmitter is a function that old-style subclasses call (EventEmitter.call(this)), as
  // readable-stream does; unenv's is a class, so the npm package, Node's own ported
  events: require.resolve('events/'),
};

let aliases: Record<string, string> | undefined;
function unenvAlias(name: string): string | undefined {
  aliases ??= defineEnv({ nodeCompat: true, npmShims: false, resolve: true }).env.alias;
  return aliases[`node:${name}`] ?? aliases[name];
}

const POLYFILL_DIRS = [
  path.dirname(require.resolve('unenv/package.json')),
  path.dirname(here('./plugin.ts')),
  path.dirname(require.resolve('string_decoder/package.json')),
  path.dirname(require.resolve('assert/package.json')),
  path.dirname(require.resolve('readable-stream/package.json')),
  path.dirname(require.resolve('events/package.json')),
].map((d) => d + path.sep);

const BUILTINS = new Set(builtinModules.filter((m) => !m.startsWith('_')));
const escape = (s: string) => s.replace(/[/]/g, '\\/');
const FILTER = new RegExp(`^(node:)?(${[...BUILTINS].map(escape).join('|')})$|^node:`);

/** Packages whose Node server they start is the app's request handler here (./hono-node-server.js). */
const SERVERS: Record<string, string> = {
  '@hono/node-server': here('./hono-node-server.js'),
};
/** Packages of other hosts' storage, bundled as the platform's own version of them (./netlify-blobs.js). */
const STORES: Record<string, string> = {
  '@netlify/blobs': here('./netlify-blobs.js'),
};

export type NodeCompatOptions = {
  /** the wrangler config's `nodejs_compat`: modules with no meaning here load as unenv's stubs */
  stubs?: boolean;
  /** filled with the modules that were given as stubs, to say so */
  stubbed?: Set<string>;
};

export function nodeCompat(options: NodeCompatOptions = {}): Plugin {
  return {
    name: 'platform-node-compat',
    setup(build) {
      build.onResolve({ filter: /^@hono\/node-server$/ }, (args) => ({
        path: SERVERS[args.path]!,
      }));
      build.onResolve({ filter: /^@netlify\/blobs$/ }, (args) => ({ path: STORES[args.path]! }));
      build.onResolve({ filter: FILTER }, (args) => {
        const name = args.path.replace(/^node:/, '');
        // the polyfills' own imports of each other take unenv's module, a stub where there is nothing
        const fromPolyfill = POLYFILL_DIRS.some((d) => args.importer.startsWith(d));
        const why = fromPolyfill
          ? undefined
          : (NO_MEANING[name] ?? NO_MEANING[name.split('/')[0]!]);
        if (why && !options.stubs)
          return {
            errors: [{ text: `"${args.path}" cannot be used in server code: ${why}.` }],
          };
        const resolved = OWN[name] ?? unenvAlias(name);
        if (!resolved)
          return {
            errors: [
              { text: `"${args.path}" is not a Node built-in module this platform offers.` },
            ],
          };
        if (why) options.stubbed?.add(name);
        // require() of a built-in gets a plain object, as Node's are: apps patch them
        // (Next.js sets require('node:timers').setImmediate); an ESM namespace has no setters
        if (args.kind === 'require-call' && !fromPolyfill)
          return { path: `${resolved}${CJS_SUFFIX}`, namespace: CJS_BUILTIN };
        return { path: resolved };
      });
      build.onLoad({ filter: /.*/, namespace: CJS_BUILTIN }, (args) => {
        const target = args.path.slice(0, -CJS_SUFFIX.length);
        return {
          contents: cjsView(target),
          resolveDir: path.dirname(target),
          loader: 'js',
        };
      });
    },
  };
}

/**
 * The CommonJS view of a built-in: what Node's require() gives. Where that is a function (the
 * EventEmitter of `events`, Stream, assert, Module), the function itself, with the module's other
 * exports on it (`class X extends require('events')`); otherwise a plain object copy, which apps
 * may patch as they do Node's (an ESM namespace has no setters).
 */
function cjsView(target: string): string {
  return `const m = require(${JSON.stringify(target)});
const fn = typeof m === 'function' ? m : m && typeof m.default === 'function' ? m.default : undefined;
if (fn) {
  for (const k of Object.keys(m)) if (k !== 'default' && !(k in fn)) fn[k] = m[k];
  module.exports = fn;
} else module.exports = Object.assign({}, m);
`;
}

/** The namespace of the one mutable CommonJS view of each built-in that require() is given. */
const CJS_BUILTIN = 'platform-cjs-builtin';
/** a .cjs name, so esbuild reads the view as CommonJS whatever the module it wraps is */
const CJS_SUFFIX = '.require.cjs';

/**
 * Reading a Workers project's wrangler config as `wrangler deploy` would (the file, and the one a
 * build points at), and what of it travels in the release beside the manifest: the `assets`
 * settings and the bindings.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { type ParseError, parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { CliError } from './output.ts';

const isFile = (root: string, rel: string) => {
  try {
    return statSync(path.join(root, rel)).isFile();
  } catch {
    return false;
  }
};

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const v = parseJsonc(readFileSync(file, 'utf8'), [], { allowTrailingComma: true });
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Where `file` (relative to the project) is, as `file:line:column`, for an error at `offset`. */
function at(file: string, text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `${file}:${before.length}:${before.at(-1)!.length + 1}`;
}

/** A wrangler config as wrangler reads it, or one line that says what is wrong and where. */
export function readWranglerConfig(root: string, file: string): Record<string, unknown> {
  const text = readFileSync(path.join(root, file), 'utf8');
  if (file.endsWith('.toml')) {
    try {
      return parseToml(text) as Record<string, unknown>;
    } catch (err) {
      const e = err as { line?: number; column?: number; message: string };
      const where = e.line ? `${file}:${e.line}:${e.column ?? 1}` : file;
      throw new CliError(
        `${where}: not valid TOML: ${e.message.split('\n')[0]}`,
        'invalid_manifest',
      );
    }
  }
  const errors: ParseError[] = [];
  const v = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length)
    throw new CliError(
      `${at(file, text, errors[0]!.offset)}: not valid JSON: ${printParseErrorCode(errors[0]!.error)}`,
      'invalid_manifest',
    );
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new CliError(`${file}: a wrangler config is a JSON object.`, 'invalid_manifest');
  return v as Record<string, unknown>;
}

/**
 * The wrangler config `wrangler deploy` would read: the one a build points at from
 * `.wrangler/deploy/config.json` (the Cloudflare Vite plugin writes `dist/<worker>/wrangler.json`
 * there), else the project's own. `dir` is the folder its paths are relative to.
 */
export function wranglerConfigFile(root: string): { file: string; dir: string } | undefined {
  const pointer = path.join(root, '.wrangler', 'deploy', 'config.json');
  if (existsSync(pointer)) {
    const p = readJson(pointer);
    if (typeof p?.configPath === 'string') {
      const target = path.resolve(path.dirname(pointer), p.configPath);
      const rel = path.relative(root, target);
      if (rel.startsWith('..') || path.isAbsolute(rel))
        throw new CliError(
          `.wrangler/deploy/config.json points at ${target}, outside the project.`,
          'invalid_manifest',
        );
      if (!isFile(root, rel))
        throw new CliError(
          `.wrangler/deploy/config.json points at ${rel}, which does not exist: run the build again (it writes that file).`,
          'invalid_manifest',
        );
      return { file: rel.split(path.sep).join('/'), dir: path.dirname(target) };
    }
  }
  const found = ['wrangler.jsonc', 'wrangler.json', 'wrangler.toml'].filter((f) => isFile(root, f));
  if (found.length > 1)
    throw new CliError(
      `${found.join(' and ')} are both here: wrangler reads only one; keep the one you use.`,
      'invalid_manifest',
    );
  return found[0] ? { file: found[0], dir: root } : undefined;
}

/** The binding names of a wrangler config's `kv_namespaces`. */
export function kvBindingsOf(w: Record<string, unknown>): string[] {
  const list = Array.isArray(w.kv_namespaces) ? w.kv_namespaces : [];
  return list
    .map((k) => (k && typeof k === 'object' ? (k as { binding?: unknown }).binding : undefined))
    .filter((b): b is string => typeof b === 'string');
}

/**
 * The bindings a Workers project declares, as the release carries them (`.platform/bindings.json`,
 * src/bindings/declared.ts), from the config `wrangler deploy` would read; undefined when none.
 */
export type BindingsFile = {
  kv_namespaces: { binding: string }[];
  r2_buckets: Record<string, unknown>[];
  d1_databases: Record<string, unknown>[];
  queues: { producers: Record<string, unknown>[]; consumers: Record<string, unknown>[] };
};

/** The members of each entry that the platform reads (wrangler's names); others, such as `max_concurrency`, are Cloudflare's alone. */
const PRODUCER_KEYS = ['binding', 'queue', 'delivery_delay'];
const CONSUMER_KEYS = [
  'queue',
  'max_batch_size',
  'max_batch_timeout',
  'max_retries',
  'dead_letter_queue',
  'retry_delay',
];

const pick = (o: unknown, keys: string[]) =>
  Object.fromEntries(
    keys
      .filter((k) => o && typeof o === 'object' && (o as Record<string, unknown>)[k] !== undefined)
      .map((k) => [k, (o as Record<string, unknown>)[k]]),
  );

export function workersBindings(dir: string): BindingsFile | undefined {
  const root = path.resolve(dir);
  const config = wranglerConfigFile(root);
  if (!config) return undefined;
  const w = readWranglerConfig(root, config.file);
  const kv = kvBindingsOf(w);
  const q = (w.queues ?? {}) as { producers?: unknown; consumers?: unknown };
  const producers = (Array.isArray(q.producers) ? q.producers : []).map((p) =>
    pick(p, PRODUCER_KEYS),
  );
  const consumers = (Array.isArray(q.consumers) ? q.consumers : [])
    // a pull consumer is read over Cloudflare's HTTP API, which is not here
    .filter((c) => (c as { type?: unknown })?.type !== 'http_pull')
    .map((c) => pick(c, CONSUMER_KEYS));
  const r2 = (Array.isArray(w.r2_buckets) ? w.r2_buckets : []).map((b) =>
    pick(b, ['binding', 'bucket_name']),
  );
  const d1 = (Array.isArray(w.d1_databases) ? w.d1_databases : []).map((b) =>
    pick(b, ['binding', 'database_name']),
  );
  if (!kv.length && !r2.length && !d1.length && !producers.length && !consumers.length)
    return undefined;
  return {
    kv_namespaces: kv.map((binding) => ({ binding })),
    r2_buckets: r2,
    d1_databases: d1,
    queues: { producers, consumers },
  };
}

/**
 * Where each D1 binding's migrations are, as `wrangler d1 migrations apply` finds them: the entry's
 * `migrations_dir`, or `migrations`, beside the config wrangler reads.
 */
export function d1MigrationDirs(dir: string): { binding: string; dir: string }[] {
  const root = path.resolve(dir);
  const config = wranglerConfigFile(root);
  if (!config) return [];
  const w = readWranglerConfig(root, config.file);
  return (Array.isArray(w.d1_databases) ? w.d1_databases : [])
    .filter((b): b is Record<string, unknown> => !!b && typeof b === 'object')
    .filter((b) => typeof b.binding === 'string')
    .map((b) => ({
      binding: b.binding as string,
      dir: path.resolve(
        config.dir,
        typeof b.migrations_dir === 'string' ? b.migrations_dir : 'migrations',
      ),
    }));
}

/**
 * A Workers project's `assets` settings, as the release carries them (`.platform/assets.json`, read
 * by the origin: src/releases/asset-rules.ts), from the config `wrangler deploy` would read; undefined
 * without a wrangler config or an assets block.
 */
export function workersAssetSettings(dir: string): Record<string, unknown> | undefined {
  const root = path.resolve(dir);
  const config = wranglerConfigFile(root);
  if (!config) return undefined;
  const assets = readWranglerConfig(root, config.file).assets;
  if (!assets || typeof assets !== 'object') return undefined;
  const a = assets as Record<string, unknown>;
  return {
    html_handling: typeof a.html_handling === 'string' ? a.html_handling : 'auto-trailing-slash',
    not_found_handling: typeof a.not_found_handling === 'string' ? a.not_found_handling : 'none',
    run_worker_first: Array.isArray(a.run_worker_first)
      ? a.run_worker_first
      : a.run_worker_first === true,
  };
}

/** What a Workers project's config says of the runtime its server code expects. */
export type WorkersRuntime = {
  /** `nodejs_compat` (or `_v2`) in compatibility_flags: Node's modules with no meaning here load as stubs */
  nodejsCompat: boolean;
};

/**
 * The runtime settings of the config `wrangler deploy` would read; undefined without one. A config
 * that binds a Durable Object is refused here, naming it: the app would reach for an object that
 * does not exist.
 */
export function workersRuntime(dir: string): WorkersRuntime | undefined {
  const root = path.resolve(dir);
  const config = wranglerConfigFile(root);
  if (!config) return undefined;
  const w = readWranglerConfig(root, config.file);
  const dos = (w.durable_objects as { bindings?: unknown } | undefined)?.bindings;
  const bound = (Array.isArray(dos) ? dos : []) as { name?: unknown; class_name?: unknown }[];
  if (bound.length) {
    const named = bound.map((b) => `${String(b.name)} (class ${String(b.class_name)})`).join(', ');
    throw new CliError(
      `${config.file} binds the Durable Object${bound.length > 1 ? 's' : ''} ${named}: Durable Objects are not available here yet; keep state in a data collection (ctx.data) or KV.`,
      'invalid_manifest',
    );
  }
  const flags = Array.isArray(w.compatibility_flags) ? w.compatibility_flags : [];
  return { nodejsCompat: flags.includes('nodejs_compat') || flags.includes('nodejs_compat_v2') };
}

/**
 * The manifest a folder implies when it has none: `platform publish` in a project written for
 * Cloudflare Workers (wrangler.toml / wrangler.json / wrangler.jsonc), Deno Deploy (deno.json),
 * Netlify (netlify.toml) or plain Node/Hono (package.json and the usual file names) writes it once,
 * shows it, and says what it could not map and the nearest thing here.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { CliError } from './output.ts';
import { parse as parseToml } from 'smol-toml';
import { BUILD_DIR } from './build.ts';
import { readWranglerConfig, wranglerConfigFile } from './wrangler-config.ts';

export type Inferred = {
  manifest: Record<string, unknown>;
  /** what it was read from, for the message */
  from: string;
  /** what could not be mapped, each with the nearest thing here */
  notes: string[];
};

type Schedule = 'every_15_minutes' | 'hourly' | 'daily';

/** A Workers cron as the nearest schedule here, and a note when it is not the same. */
export function scheduleOf(cron: string): { schedule: Schedule; note?: string } {
  const [minute = '*', hour = '*', dom = '*', month = '*', dow = '*'] = cron.trim().split(/\s+/);
  const every = /^\*\/(\d+)$/.exec(minute);
  const fixed = (f: string) => /^\d+$/.test(f);
  const rest = dom === '*' && month === '*' && (dow === '*' || dow === '?');
  if (minute === '*' || (every && Number(every[1]) < 15))
    return {
      schedule: 'every_15_minutes',
      note: `cron "${cron}" runs more often than every 15 minutes, the most frequent schedule here: it runs every 15 minutes`,
    };
  if (every && Number(every[1]) === 15 && hour === '*' && rest)
    return { schedule: 'every_15_minutes' };
  if (!fixed(minute))
    return {
      schedule: 'every_15_minutes',
      note: `cron "${cron}" has no schedule of its own here: it runs every 15 minutes`,
    };
  if (hour === '*' && rest) return { schedule: 'hourly' };
  if (fixed(hour) && rest) return { schedule: 'daily' };
  return hour === '*' || hour.includes('/') || hour.includes(',')
    ? { schedule: 'hourly', note: `cron "${cron}" runs hourly here (the nearest schedule)` }
    : { schedule: 'daily', note: `cron "${cron}" runs daily here (the nearest schedule)` };
}

const ENTRY_NAMES = [
  'src/index.ts',
  'src/index.tsx',
  'src/index.js',
  'src/index.mjs',
  'src/server.ts',
  'src/server.js',
  'src/worker.ts',
  'src/worker.js',
  'src/main.ts',
  'index.ts',
  'index.js',
  'index.mjs',
  'server.ts',
  'server.js',
  'worker.ts',
  'worker.js',
  'main.ts',
  'main.tsx',
  'main.js',
  'mod.ts',
];
const STATIC_NAMES = ['public', 'static', 'dist', 'assets', 'site'];

const isFile = (root: string, rel: string) => {
  try {
    return statSync(path.join(root, rel)).isFile();
  } catch {
    return false;
  }
};
const isDirWithFiles = (root: string, rel: string) => {
  try {
    return (
      statSync(path.join(root, rel)).isDirectory() && readdirSync(path.join(root, rel)).length > 0
    );
  } catch {
    return false;
  }
};
const clean = (p: string) => p.replace(/^\.\//, '').replace(/\/+$/, '');

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const v = parseJsonc(readFileSync(file, 'utf8'), [], { allowTrailingComma: true });
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function readToml(file: string): Record<string, unknown> | undefined {
  try {
    return parseToml(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** A manifest name: the project's own, else the folder's. */
function nameOf(root: string, given: unknown): string {
  const pkg = readJson(path.join(root, 'package.json'));
  const name =
    typeof given === 'string' && given
      ? given
      : typeof pkg?.name === 'string'
        ? pkg.name
        : path.basename(root);
  return name.slice(0, 120) || 'app';
}

function guessEntry(root: string): string | undefined {
  const pkg = readJson(path.join(root, 'package.json'));
  for (const field of ['module', 'main']) {
    const v = pkg?.[field];
    if (typeof v === 'string' && isFile(root, clean(v)) && !clean(v).startsWith('dist/'))
      return clean(v);
  }
  return ENTRY_NAMES.find((n) => isFile(root, n));
}

/**
 * The Worker a package.json script hands wrangler on its command line (`wrangler deploy
 * src/index.ts`, as Hono's examples do), which wrangler takes over `main`: `{entry, script}`.
 * `deploy` and `publish` first, then `dev` and `start` (`dev` only where the config names none).
 */
function wranglerScriptEntry(
  root: string,
  scripts: string[],
): { entry: string; script: string } | undefined {
  const all = readJson(path.join(root, 'package.json'))?.scripts;
  if (!all || typeof all !== 'object') return undefined;
  for (const script of scripts) {
    const cmd = (all as Record<string, unknown>)[script];
    if (typeof cmd !== 'string') continue;
    const m =
      /\bwrangler\s+(?:deploy|publish|dev)\b[^&|;]*?\s([\w./-]+\.(?:tsx?|jsx?|mjs))(?=\s|$)/.exec(
        cmd,
      );
    if (m && isFile(root, clean(m[1]!))) return { entry: clean(m[1]!), script };
  }
  return undefined;
}

function guessStatic(root: string): string | undefined {
  return STATIC_NAMES.find((d) => isDirWithFiles(root, d));
}

/** `{static_root, server_entry?, fallback}`: a folder with server code and no static files publishes as it is. */
function runtimeFor(
  root: string,
  entry: string | undefined,
  assets: string | undefined,
  spa: boolean,
): Record<string, unknown> | undefined {
  const staticRoot = assets && isDirWithFiles(root, assets) ? assets : undefined;
  if (entry)
    return { static_root: staticRoot ?? BUILD_DIR, server_entry: entry, fallback: 'server' };
  if (staticRoot) return { static_root: staticRoot, fallback: spa ? 'index.html' : '404' };
  return undefined;
}

function fromWrangler(root: string): Inferred | undefined {
  const config = wranglerConfigFile(root);
  if (!config) return undefined;
  const { file } = config;
  const w = readWranglerConfig(root, file);
  // the config's paths are relative to the config file, as wrangler reads them
  const fromConfig = (p: string) =>
    clean(path.relative(root, path.resolve(config.dir, p)).split(path.sep).join('/'));
  const notes: string[] = [];
  if (config.dir !== root)
    notes.push(`the build's deploy config ${file} (from .wrangler/deploy/config.json)`);
  const given = typeof w.main === 'string' ? fromConfig(w.main) : undefined;
  if (given && !isFile(root, given))
    throw new CliError(
      `${file}: main "${w.main}" does not exist${config.dir !== root ? ` (${given} in the project)` : ''}: build the project first, or correct main.`,
      'invalid_manifest',
    );
  const fromScript =
    wranglerScriptEntry(root, ['deploy', 'publish']) ??
    (given ? undefined : wranglerScriptEntry(root, ['dev', 'start']));
  const main = fromScript?.entry ?? given;
  if (fromScript && fromScript.entry !== given)
    notes.push(
      `server entry ${fromScript.entry}: the Worker package.json's "${fromScript.script}" script hands wrangler`,
    );
  const assets = (w.assets ?? {}) as {
    directory?: string;
    not_found_handling?: string;
    binding?: string;
    run_worker_first?: unknown;
  };
  const site = (w.site ?? {}) as { bucket?: string };
  const assetDir = assets.directory
    ? fromConfig(assets.directory)
    : site.bucket
      ? fromConfig(site.bucket)
      : undefined;
  const spa = assets.not_found_handling === 'single-page-application';
  if (main && assets.run_worker_first)
    notes.push(
      'assets.run_worker_first: static files are served before the Worker here, so it sees only the paths no file matches; keep files it must guard out of the assets folder',
    );
  const jobs: Record<string, unknown> = {};
  const crons = ((w.triggers as { crons?: unknown } | undefined)?.crons ?? []) as unknown[];
  crons.forEach((cron, i) => {
    if (typeof cron !== 'string') return;
    const { schedule, note } = scheduleOf(cron);
    jobs[i === 0 ? 'scheduled' : `scheduled_${i + 1}`] = { trigger: 'schedule', schedule };
    if (note) notes.push(note);
  });
  const vars = Object.keys((w.vars ?? {}) as object);
  if (vars.length)
    notes.push(
      `vars ${vars.join(', ')}: configuration is the app's secrets here; set each with \`platform secrets set NAME\` (read as env.NAME)`,
    );
  const nearest: Record<string, string> = {
    services: 'service bindings: call the other app over fetch()',
    ai: 'Workers AI has no counterpart here',
  };
  for (const [k, why] of Object.entries(nearest)) if (w[k] !== undefined) notes.push(why);
  const runtime = runtimeFor(
    root,
    main ?? (assetDir ? undefined : guessEntry(root)),
    assetDir,
    spa,
  );
  if (!runtime) return undefined;
  return {
    from: file,
    notes,
    manifest: {
      app: { name: nameOf(root, w.name) },
      runtime,
      ...(Object.keys(jobs).length ? { resources: { jobs } } : {}),
    },
  };
}

function fromDeno(root: string): Inferred | undefined {
  const file = ['deno.jsonc', 'deno.json'].find((f) => isFile(root, f));
  if (!file) return undefined;
  const d = readJson(path.join(root, file)) ?? {};
  const notes: string[] = [];
  const tasks = (d.tasks ?? {}) as Record<string, unknown>;
  let entry: string | undefined;
  for (const t of ['start', 'serve', 'dev']) {
    const cmd = tasks[t];
    const m = typeof cmd === 'string' ? /([\w./-]+\.(?:tsx?|jsx?|mjs))(?:\s|$)/.exec(cmd) : null;
    if (m && isFile(root, clean(m[1]!))) {
      entry = clean(m[1]!);
      break;
    }
  }
  entry ??=
    typeof d.exports === 'string' && isFile(root, clean(d.exports)) ? clean(d.exports) : undefined;
  entry ??= guessEntry(root);
  const runtime = runtimeFor(root, entry, guessStatic(root), false);
  if (!runtime) return undefined;
  const unstable = Array.isArray(d.unstable) ? d.unstable : [];
  if (unstable.includes('cron'))
    notes.push('"unstable" Deno.cron is not here: declare a scheduled job (resources.jobs)');
  return { from: file, notes, manifest: { app: { name: nameOf(root, d.name) }, runtime } };
}

/** The one function in `dir`, the server entry; more than one is noted (an app has one entry). */
function oneFunction(root: string, dir: string, what: string, notes: string[]): string | undefined {
  if (!existsSync(path.join(root, dir))) return undefined;
  const fns = readdirSync(path.join(root, dir)).filter((f) => /\.(m?[jt]sx?)$/.test(f));
  if (fns.length === 1) return `${dir}/${fns[0]}`;
  if (fns.length > 1)
    notes.push(
      `${fns.length} ${what} in ${dir}: an app has one server entry here; route them from one module (Hono, itty-router)`,
    );
  return undefined;
}

function fromNetlify(root: string): Inferred | undefined {
  if (!isFile(root, 'netlify.toml')) return undefined;
  const n = readToml(path.join(root, 'netlify.toml')) ?? {};
  const build = (n.build ?? {}) as {
    publish?: string;
    functions?: string;
    edge_functions?: string;
  };
  const notes: string[] = [];
  const publishDir = build.publish ? clean(build.publish) : guessStatic(root);
  const fnDir = clean(
    ((n.functions as { directory?: string } | undefined)?.directory ??
      build.functions ??
      'netlify/functions') as string,
  );
  // Functions, else Edge Functions (Deno, `export default (request, context) => Response`)
  const edgeDir = clean(build.edge_functions ?? 'netlify/edge-functions');
  let entry = oneFunction(root, fnDir, 'functions', notes);
  if (!entry) {
    entry = oneFunction(root, edgeDir, 'edge functions', notes);
    if (entry)
      notes.push(
        `edge function ${entry}: static files are served before it runs, so context.next() is not needed for them here`,
      );
  }
  if (Array.isArray(n.redirects) && n.redirects.length)
    notes.push('[[redirects]]: answer them from server code (fallback "server")');
  const runtime = runtimeFor(root, entry, publishDir, false);
  if (!runtime) return undefined;
  return {
    from: 'netlify.toml',
    notes,
    manifest: { app: { name: nameOf(root, undefined) }, runtime },
  };
}

function fromFolder(root: string): Inferred | undefined {
  const notes: string[] = [];
  let entry = guessEntry(root);
  if (!entry) {
    // Vercel: functions in api/ (`export function GET(request)`), static files in public/
    entry = oneFunction(root, 'api', 'functions', notes);
    if (entry)
      notes.push(
        `${entry}: the server entry answers every path no static file does (on Vercel, its /api/ path only)`,
      );
  }
  const runtime = runtimeFor(root, entry, guessStatic(root), false);
  if (!runtime) return undefined;
  return {
    from: runtime.server_entry ? String(runtime.server_entry) : String(runtime.static_root),
    notes,
    manifest: { app: { name: nameOf(root, undefined) }, runtime },
  };
}

/** The manifest this folder implies, or undefined when it gives nothing to go on. */
export function inferManifest(dir: string): Inferred | undefined {
  const root = path.resolve(dir);
  return fromWrangler(root) ?? fromDeno(root) ?? fromNetlify(root) ?? fromFolder(root);
}

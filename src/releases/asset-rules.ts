/**
 * `_redirects` and `_headers` in a release's static root, applied as Workers static assets (and
 * Netlify, and Pages) apply them. The two files are configuration, never served. Grammar, as
 * Cloudflare documents it:
 * - `_redirects`: one rule a line, `source destination [status]` (301, 302 (default), 303, 307, 308,
 *   or 200: the destination's file answers at the source's URL); `#` comments. A source may end in
 *   `*` (the rest of the path, `:splat` in the destination) and hold `:name` segments. At most 2,000
 *   static and 100 dynamic rules; the first that matches wins.
 * - `_headers`: a URL pattern on a line of its own (same `*` and `:name`), then indented
 *   `Name: value` lines that add a header to the files it matches, or `! Name` that removes one.
 * Redirects are checked before a file is looked up; headers are added to static files' answers.
 */

export type RedirectRule = { match: RegExp; to: string; status: number };
export type HeaderRule = { match: RegExp; set: [string, string][]; remove: string[] };
export type AssetRules = { redirects: RedirectRule[]; headers: HeaderRule[] };

/**
 * A Workers project's `assets` settings, as the CLI writes them into the release
 * (`.platform/assets.json`, from the wrangler config): the contract's runtime has no member for them.
 */
export type WorkersAssets = {
  html_handling: 'auto-trailing-slash' | 'force-trailing-slash' | 'drop-trailing-slash' | 'none';
  not_found_handling: 'single-page-application' | '404-page' | 'none';
  /** true, or the path patterns (`/api/*`) where the Worker runs before the SPA's index.html */
  run_worker_first: boolean | string[];
};
export const WORKERS_ASSETS_PATH = '.platform/assets.json';

/** The settings file's content, whatever was written there: what it says, or Workers' defaults. */
export function workersAssetsOf(json: unknown): WorkersAssets {
  const o = (json && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const html = ['auto-trailing-slash', 'force-trailing-slash', 'drop-trailing-slash', 'none'];
  const missing = ['single-page-application', '404-page', 'none'];
  return {
    html_handling: (html.includes(o.html_handling as string)
      ? o.html_handling
      : 'auto-trailing-slash') as WorkersAssets['html_handling'],
    not_found_handling: (missing.includes(o.not_found_handling as string)
      ? o.not_found_handling
      : 'none') as WorkersAssets['not_found_handling'],
    run_worker_first: Array.isArray(o.run_worker_first)
      ? o.run_worker_first.filter((p): p is string => typeof p === 'string').slice(0, 100)
      : o.run_worker_first === true,
  };
}

/**
 * What Workers' asset handling answers where neither a file nor an HTML page (workersHtmlIntent)
 * matched: for a browser's navigation, the SPA's `index.html` before the Worker runs
 * (not_found_handling "single-page-application", unless run_worker_first), as Workers do.
 */
export function workersAssetAnswer<F extends { path: string }>(
  release: {
    staticRoot: string | null;
    files: Map<string, F>;
    workersAssets: WorkersAssets | null;
  },
  rel: string,
  req: Request,
): F | null {
  const w = release.workersAssets;
  if (!w || release.staticRoot === null) return null;
  const root = release.staticRoot;
  const first = w.run_worker_first;
  const workerFirst =
    first === true ||
    (Array.isArray(first) && first.some((p) => globMatch(p.startsWith('!') ? '' : p, `/${rel}`)));
  if (
    w.not_found_handling === 'single-page-application' &&
    !workerFirst &&
    (req.method === 'GET' || req.method === 'HEAD') &&
    req.headers.get('sec-fetch-mode') === 'navigate'
  )
    return release.files.get(`${root}/index.html`) ?? null;
  return null;
}

/**
 * What Workers' `html_handling` makes of a request path for an HTML page, as Cloudflare's tables
 * give it ("HTML handling"): the page to serve at its canonical path, or a 307 to the path it
 * names in this mode (`/file.html`, `/file/`, `/file/index(.html)` all name `file.html`; `/folder`,
 * `/folder.html`, `/folder/index(.html)` name `folder/index.html`). `auto-trailing-slash` serves a
 * page without a slash and an index with one; `force-` and `drop-trailing-slash` one form for both;
 * every other form is one 307 to it (Miniflare's asset worker does so where Cloudflare's table shows
 * `/folder.html` → `/folder`, a second hop). `none` serves files by their exact path only. Null: no
 * page by that name (the exact file, not_found_handling and the Worker decide).
 */
export function workersHtmlIntent<F>(
  files: Map<string, F>,
  root: string,
  mode: WorkersAssets['html_handling'],
  path: string,
): { file: F } | { redirect: string } | null {
  if (mode === 'none') return null;
  let base = path;
  if (base.endsWith('/index.html')) base = base.slice(0, -11);
  else if (base.endsWith('/index')) base = base.slice(0, -6);
  else if (base.endsWith('.html')) base = base.slice(0, -5);
  else if (base.endsWith('/')) base = base.slice(0, -1);
  const page = base ? files.get(`${root}${base}.html`) : undefined;
  const index = files.get(`${root}${base}/index.html`);
  if (!page && !index) return null;
  const slashed = `${base}/`;
  const bare = base || '/';
  const to = (target: string) => (target === path ? null : { redirect: target });
  if (mode === 'force-trailing-slash')
    return path === slashed ? { file: (index ?? page)! } : to(slashed);
  if (mode === 'drop-trailing-slash')
    return path === bare ? { file: (base ? (page ?? index) : index)! } : to(bare);
  // auto: a page at its bare name, an index with a slash
  if (path === slashed && index) return { file: index };
  if (path === base && page) return { file: page };
  return to(page ? bare : slashed);
}

/** workersHtmlIntent for a release and a decoded request path; the redirect's path is encoded. */
export function workersPageFor<F>(
  release: {
    staticRoot: string | null;
    files: Map<string, F>;
    workersAssets: WorkersAssets | null;
  },
  segments: string[],
  directory: boolean,
): { file: F } | { redirect: string } | null {
  const w = release.workersAssets;
  if (!w || release.staticRoot === null) return null;
  const rel = segments.join('/');
  const path = `/${rel}${directory && rel ? '/' : ''}`;
  const got = workersHtmlIntent(release.files, release.staticRoot, w.html_handling, path);
  if (!got || 'file' in got) return got;
  return { redirect: got.redirect.split('/').map(encodeURIComponent).join('/') };
}

const STATUSES = new Set([200, 301, 302, 303, 307, 308]);
const MAX_STATIC = 2000;
const MAX_DYNAMIC = 100;

/** A source pattern as a regular expression over the request path (`*` → `splat`, `:name` → a segment). */
function patternOf(source: string): RegExp | null {
  if (!source.startsWith('/')) return null;
  let re = '';
  const parts = source.split(/(\*|:[A-Za-z]\w*)/);
  for (const part of parts) {
    if (part === '*') re += '(?<splat>.*)';
    else if (/^:[A-Za-z]\w*$/.test(part)) re += `(?<${part.slice(1)}>[^/]+)`;
    else re += part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  try {
    return new RegExp(`^${re}$`);
  } catch {
    return null; // a placeholder named twice
  }
}

const dynamic = (source: string) => /[*:]/.test(source);

export function parseRedirects(text: string): RedirectRule[] {
  const rules: RedirectRule[] = [];
  let statics = 0;
  let dynamics = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [source, to, code] = line.split(/\s+/);
    const status = code === undefined ? 302 : Number(code);
    if (!source || !to || !STATUSES.has(status)) continue;
    // a 200 answers with one of the release's own files
    if (status === 200 && !to.startsWith('/')) continue;
    if (dynamic(source) ? ++dynamics > MAX_DYNAMIC : ++statics > MAX_STATIC) continue;
    const match = patternOf(source);
    if (match) rules.push({ match, to, status });
  }
  return rules;
}

export function parseHeaders(text: string): HeaderRule[] {
  const rules: HeaderRule[] = [];
  let current: HeaderRule | undefined;
  for (const raw of text.split(/\r?\n/)) {
    if (!raw.trim() || raw.trim().startsWith('#')) continue;
    if (!/^\s/.test(raw)) {
      const match = patternOf(raw.trim());
      current = match ? { match, set: [], remove: [] } : undefined;
      if (current) rules.push(current);
      continue;
    }
    if (!current) continue;
    const line = raw.trim();
    if (line.startsWith('!')) {
      current.remove.push(line.slice(1).trim().toLowerCase());
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    // what a Headers object would refuse is left out, not a 500 later
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name) || /[\r\n\0]/.test(value)) continue;
    current.set.push([name, value]);
  }
  return rules;
}

/** The redirect rule that matches `pathname`, with its destination filled in; or undefined. */
export function redirectFor(
  rules: AssetRules,
  pathname: string,
  search: string,
): { to: string; status: number } | undefined {
  for (const rule of rules.redirects) {
    const m = rule.match.exec(pathname);
    if (!m) continue;
    const groups = m.groups ?? {};
    let to = rule.to.replace(/:([A-Za-z]\w*)/g, (all, name: string) => groups[name] ?? all);
    // the query goes along unless the destination has its own
    if (search && !to.includes('?')) to += search;
    return { to, status: rule.status };
  }
  return undefined;
}

/** A static file's answer with the `_headers` rules that match its path. */
export function withHeaderRules(res: Response, rules: AssetRules, pathname: string): Response {
  const matching = rules.headers.filter((h) => h.match.test(pathname));
  if (!matching.length) return res;
  const headers = new Headers(res.headers);
  // a rule's header replaces the platform's own (Cache-Control for immutable assets); rules that
  // set the same name again join their values, as Cloudflare joins them
  const ruled = new Set<string>();
  for (const rule of matching) {
    for (const name of rule.remove) headers.delete(name);
    for (const [name, value] of rule.set) {
      const key = name.toLowerCase();
      if (ruled.has(key)) headers.append(name, value);
      else headers.set(name, value);
      ruled.add(key);
    }
  }
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/** A run_worker_first pattern (`/api/*`, `*` any characters) against a path. */
function globMatch(pattern: string, pathname: string): boolean {
  if (!pattern) return false;
  const re = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${re}$`).test(pathname);
}

/** The console host's pages and assets (outside `/v0`), with the security headers every response carries. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Hono, type Context } from 'hono';
import type { Env } from '../http/env.ts';
import {
  BYTES_JS,
  SAME_ORIGIN_PATH_JS,
  consoleCss,
  consoleJs,
  pageScript,
  readyJs,
} from './assets.ts';
import { sameOriginPath } from '../lib/same-origin-path.ts';
import { layout } from './layout.ts';
import { consolePageList } from './pages/index.ts';
import type { PlanCatalogue } from '../plans/catalogue.ts';

const require = createRequire(import.meta.url);

/**
 * No inline script or style at all: every script is a file under /assets, so 'self' is enough.
 * Images may also come from the app origins (the file browser's previews), nothing else.
 */
const cspFor = (appOrigins: string) =>
  `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: ${appOrigins}; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`;

function securedWith(c: Context<Env>, csp: string): void {
  c.header('Content-Security-Policy', csp);
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('X-Frame-Options', 'DENY');
  c.header('Cache-Control', 'no-store');
}

/** A page that does not exist, styled like the console, with the way back (no script needed). */
export function consoleNotFound(c: Context<Env>, docsUrl: string, appOrigins = ''): Response {
  securedWith(c, cspFor(appOrigins));
  return c.html(
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found · Platform</title><link rel="stylesheet" href="/assets/console.css"></head>
<body><header><a class="brand" href="/">Platform</a><span class="spacer"></span><a href="${docsUrl}">Docs</a></header>
<main class="narrow"><h1>There is no such page</h1><section class="card"><p>The console has no page at this address.</p>
<p><a href="/">Your apps</a> · <a href="/account">Account</a> · <a href="${docsUrl}">Docs</a></p></section></main></body></html>`,
    404,
  );
}

export function consolePages(options: {
  devOutbox: boolean;
  plans: PlanCatalogue;
  appOrigins?: string;
  /** the docs host, linked from every page's header */
  docsUrl?: string;
}): Hono<Env> {
  const r = new Hono<Env>();
  const csp = cspFor(options.appOrigins ?? '');
  const secured = (c: Context<Env>) => securedWith(c, csp);
  const pages = consolePageList(options);
  const nav = pages
    .filter((p) => p.nav)
    .map((p) => ({ label: p.nav!, path: p.path, operator: p.operator }));
  for (const page of pages) {
    // a GET only renders: nothing is read or changed until the page's script calls /v0
    r.get(page.path, (c) => {
      secured(c);
      const current =
        page.nav ??
        (page.path.startsWith('/apps/')
          ? 'Apps'
          : page.path.startsWith('/operator')
            ? 'Operator'
            : undefined);
      return c.html(
        layout(page, c.req.param() as Record<string, string>, nav, current, options.docsUrl),
      );
    });
    for (const script of [page.id, ...(page.modules ?? [])])
      r.get(`/assets/pages/${script}.js`, (c) => {
        secured(c);
        return c.body(pageScript(script), 200, {
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'no-cache',
        });
      });
  }
  // the app-users page was the invites page: old links land on it
  r.get('/apps/:app_id/invites', (c) => {
    secured(c);
    const to = sameOriginPath(`/apps/${encodeURIComponent(c.req.param('app_id'))}/users`);
    return c.redirect(to, 301);
  });
  for (const [file, body] of [
    ['console.js', consoleJs],
    ['ready.js', readyJs],
    ['bytes.js', () => BYTES_JS],
    ['same-origin-path.js', () => SAME_ORIGIN_PATH_JS],
  ] as const)
    r.get(`/assets/${file}`, (c) => {
      secured(c);
      return c.body(body(), 200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'no-cache',
      });
    });
  // uPlot (the analytics chart), served from its npm package as it is
  for (const [file, type] of [
    ['uPlot.esm.js', 'text/javascript; charset=utf-8'],
    ['uPlot.min.css', 'text/css; charset=utf-8'],
  ] as const) {
    let body: string | undefined;
    r.get(`/assets/${file === 'uPlot.esm.js' ? 'uplot.esm.js' : 'uplot.min.css'}`, (c) => {
      secured(c);
      body ??= readFileSync(require.resolve(`uplot/dist/${file}`), 'utf8');
      return c.body(body, 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
    });
  }
  r.get('/assets/console.css', (c) => {
    secured(c);
    return c.body(consoleCss(), 200, {
      'content-type': 'text/css; charset=utf-8',
      'cache-control': 'no-cache',
    });
  });
  return r;
}

/** The docs host: the API reference, the guides, `/openapi.json` and the manifest's JSON Schema. */
import { Hono, type Context } from 'hono';
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import type { Env } from '../http/env.ts';
import type { OpenApiDocument } from '../openapi/generate.ts';
import { loadGuides, type Guide } from './guides.ts';
import { MANIFEST_SCHEMA_PATH, manifestSchema } from './manifest-schema.ts';
import { referenceBody } from './reference.ts';

const CSP =
  "default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const CSS = `:root{color-scheme:light dark;--fg:#1d2430;--muted:#5b6473;--bg:#fff;--side:#f7f8fa;--line:#d9dde3;--accent:#3457d5;--code:#eef1f5}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--muted:#a3abb8;--bg:#12151b;--side:#1a1e26;--line:#2c323d;--accent:#7d98ff;--code:#232935}}
*{box-sizing:border-box}body{margin:0;font:16px/1.6 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);display:flex;min-height:100vh}
a{color:var(--accent)}aside{width:16rem;flex:0 0 16rem;padding:1.5rem;background:var(--side);border-right:1px solid var(--line)}aside ul{list-style:none;padding:0;margin:0 0 1.5rem}aside li{margin:.3rem 0}
aside a{text-decoration:none}aside a[aria-current=page]{font-weight:700;color:var(--fg)}.brand{font-weight:700;font-size:1.1rem;color:var(--fg)}
main{flex:1;min-width:0;max-width:60rem;padding:1.5rem 2rem}h2{margin-top:2.5rem;border-bottom:1px solid var(--line);padding-bottom:.3rem}
code,pre{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--code);border-radius:4px}code{padding:.1em .3em}pre{padding:.8rem;overflow:auto}pre code{padding:0}
table{border-collapse:collapse;width:100%;font-size:.92rem;margin:.5rem 0}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}th{color:var(--muted)}
.muted{color:var(--muted)}.op{border:1px solid var(--line);border-radius:10px;padding:.25rem 1rem;margin:1rem 0}.op h3{font-size:1rem}
.method{display:inline-block;min-width:3.6rem;font:700 .75rem ui-monospace,monospace;padding:.1rem .35rem;border-radius:4px;color:#fff;background:#667085;text-align:center}
.method.get{background:#067647}.method.post{background:#3457d5}.method.put{background:#b54708}.method.patch{background:#6941c6}.method.delete{background:#b42318}
.toc{columns:2 18rem;font-size:.9rem}.toc ul{list-style:none;padding-left:0}
@media (max-width:720px){body{display:block}aside{width:auto;border-right:0;border-bottom:1px solid var(--line)}main{padding:1rem}}`;

function page(
  c: Context<Env>,
  title: string,
  current: string,
  body: HtmlEscapedString | Promise<HtmlEscapedString>,
) {
  c.header('Content-Security-Policy', CSP);
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'no-referrer');
  const guides = loadGuides();
  return c.html(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · Platform docs</title><link rel="stylesheet" href="/assets/docs.css"></head>
<body><aside><p><a class="brand" href="/">Platform docs</a></p>
<nav aria-label="Docs"><strong>Guides</strong><ul>${guides.map((g) => html`<li><a href="/guides/${g.slug}"${current === g.slug ? raw(' aria-current="page"') : ''}>${g.title}</a></li>`)}</ul>
<strong>Reference</strong><ul><li><a href="/reference"${current === 'reference' ? raw(' aria-current="page"') : ''}>API reference</a></li><li><a href="/openapi.json">openapi.json</a></li><li><a href="${MANIFEST_SCHEMA_PATH}">Manifest JSON Schema</a></li></ul></nav></aside>
<main>${body}</main></body></html>`);
}

export function docsPages(options: {
  document: () => OpenApiDocument;
  publicBase: string;
}): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/', (c) =>
    page(
      c,
      'Docs',
      '',
      html`<h1>Platform docs</h1><p>Publish and operate small web apps: a manifest, some files, and the platform serves, runs and keeps them.</p>
<h2>Guides</h2><ul>${loadGuides().map((g: Guide) => html`<li><a href="/guides/${g.slug}">${g.title}</a></li>`)}</ul>
<h2>Reference</h2><ul><li><a href="/reference">The /v0 API</a>: every operation, its statuses, error codes and examples.</li><li><a href="/openapi.json">/openapi.json</a>: the same as OpenAPI 3.1, for generated clients.</li><li><a href="${MANIFEST_SCHEMA_PATH}">${MANIFEST_SCHEMA_PATH}</a>: the manifest's JSON Schema, for editors.</li></ul>`,
    ),
  );
  r.get('/reference', (c) =>
    page(
      c,
      'API reference',
      'reference',
      html`<h1>API reference (v0)</h1>${referenceBody(options.document())}`,
    ),
  );
  r.get('/guides/:slug', (c) => {
    const guide = loadGuides().find((g) => g.slug === c.req.param('slug'));
    if (!guide) return c.notFound();
    return page(c, guide.title, guide.slug, html`${raw(guide.html)}`);
  });
  r.get('/openapi.json', (c) => c.json(options.document()));
  r.get(MANIFEST_SCHEMA_PATH, (c) => manifestSchemaResponse(c, options.publicBase));
  r.get('/assets/docs.css', (c) =>
    c.body(CSS, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache' }),
  );
  return r;
}

/** The schema as JSON Schema's own media type, cacheable, readable from any origin (editors fetch it). */
export function manifestSchemaResponse(c: Context<Env>, base: string): Response {
  return c.body(JSON.stringify(manifestSchema(base), null, 2), 200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'public, max-age=300',
    'access-control-allow-origin': '*',
  });
}

/**
 * What a console page is, and the frame every page shares. A page is one file under `pages/`
 * exporting a `ConsolePage`, its script in `client/pages/<id>.js`; listing it in `pages/index.ts` (with a `nav` label, if it belongs in
 * the top navigation) is all it takes to serve it.
 */
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { PERMISSIONS } from '../accounts/roles.ts';

/** The role matrix, for pages that offer only what a member's role may do (the API decides). */
const permissionsJson = raw(JSON.stringify(PERMISSIONS));

type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

export type ConsolePage = {
  /** names its script: `client/pages/<id>.js`, served at `/assets/pages/<id>.js` */
  id: string;
  /** Hono path, e.g. `/apps/:app_id/secrets` */
  path: string;
  title: string;
  /** label in the top navigation, for pages that belong there */
  nav?: string;
  /** a page for signed-in people (signed-out visitors are sent to sign in) */
  signedIn: boolean;
  /** an operator's page: its navigation link shows only to the server's operators */
  operator?: boolean;
  narrow?: boolean;
  /** other scripts the page's script imports, each `client/pages/<name>.js` at `/assets/pages/<name>.js` */
  modules?: string[];
  /** the server-rendered shell: headings, forms and loading states; data arrives from /v0 */
  body(params: Record<string, string>): Markup;
};

export function layout(
  page: ConsolePage,
  params: Record<string, string>,
  nav: { label: string; path: string; operator?: boolean }[],
  currentNav: string | undefined,
  docsUrl?: string,
): Markup {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${page.title} · Platform</title>
<link rel="stylesheet" href="/assets/console.css">
<script type="module" src="/assets/pages/${page.id}.js"></script>
<script type="module" src="/assets/ready.js"></script>
${page.signedIn ? html`<script type="application/json" id="permissions">${permissionsJson}</script>` : ''}
</head>
<body data-page="${page.id}">
<header>
<a class="brand" href="/">Platform</a>
${page.signedIn ? html`<nav aria-label="Main">${nav.map((n) => html`<a href="${n.path}"${n.label === currentNav ? raw(' aria-current="page"') : ''}${n.operator ? raw(' data-operator hidden') : ''}>${n.label}</a>`)}</nav>` : ''}
<span class="spacer"></span>
${docsUrl ? html`<a class="docs-link" href="${docsUrl}">Docs</a>` : ''}
${page.signedIn ? html`<select id="account-switch" aria-label="Account" hidden></select>` : ''}
<span id="who" aria-live="polite"></span>
${page.signedIn ? html`<button id="sign-out" type="button" class="small" hidden>Sign out</button>` : ''}
</header>
<main class="${page.narrow ? 'narrow' : ''}" inert>
<h1>${page.title}</h1>
<p id="msg" role="status" aria-live="polite"></p>
${page.body(params)}
</main>
</body>
</html>`;
}

/** The tabs of the Operator section. */
export function operatorTabs(active: string): Markup {
  const tabs: [string, string][] = [
    ['Accounts', '/operator'],
    ['Health', '/operator/health'],
    ['Backups', '/operator/backups'],
    ['Actions', '/operator/actions'],
  ];
  return html`<nav class="tabs" aria-label="Operator">${tabs.map(
    ([label, path]) =>
      html`<a href="${path}"${label === active ? raw(' aria-current="page"') : ''}>${label}</a>`,
  )}</nav>`;
}

/** The tabs of an app's pages. */
export function appTabs(appId: string, active: string): Markup {
  const tabs: [string, string][] = [
    ['Releases', ''],
    ['Resources', '/resources'],
    ['Data', '/data'],
    ['Files', '/files'],
    ['Storage', '/storage'],
    ['Secrets', '/secrets'],
    ['Domains', '/domains'],
    ['Analytics', '/analytics'],
    ['Events', '/events'],
    ['Users', '/users'],
  ];
  return html`<p class="muted" id="app-origin"></p><nav class="tabs" aria-label="App">${tabs.map(
    ([label, suffix]) =>
      html`<a href="/apps/${appId}${suffix}"${label === active ? raw(' aria-current="page"') : ''}>${label}</a>`,
  )}</nav>`;
}

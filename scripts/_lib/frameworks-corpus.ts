/**
 * The framework corpus: apps no one here wrote, each made by its framework's own create tool (the
 * versions pinned in test/frameworks/tools/package-lock.json), installed from the lockfile committed
 * beside it, built by its own build and compared, request by request, with its own `wrangler dev`.
 */

/** One request, sent alike to the control and to the platform. */
export type Probe = {
  name: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /** the request's Origin is the origin it is sent to, as a browser's form post has it */
  sameOrigin?: boolean;
  body?: string;
  /**
   * `exact`: status, content type, location and body equal once each side's origin is replaced;
   * `status`: status, content type and location only (the body holds something random)
   */
  compare?: 'exact' | 'status';
};

export type FrameworkApp = {
  name: string;
  /** the framework and its Cloudflare adapter, as the table names them */
  label: string;
  /** the create tool's command, run in the apps folder; `{dir}` is the app's folder name */
  create: string[];
  /** shell commands run in the new app before its install: the adapter's own setup, as its guide has it */
  setup?: string[];
  /** shell commands run in the app after install, in order: its own build */
  build: string[];
  /** the page loaded in Chromium on both sides, its visible text compared */
  page: string;
  probes: Probe[];
};

const NAVIGATE = {
  accept: 'text/html',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-dest': 'document',
};
const FORM = { ...NAVIGATE, 'content-type': 'application/x-www-form-urlencoded' };

export const FRAMEWORK_APPS: FrameworkApp[] = [
  {
    name: 'sveltekit',
    label: 'SvelteKit demo (sv create, adapter-cloudflare)',
    create: [
      'sv',
      'create',
      '{dir}',
      '--template',
      'demo',
      '--types',
      'ts',
      '--add',
      'sveltekit-adapter=adapter:cloudflare+cfTarget:workers',
      '--no-install',
    ],
    // the adapter's README: `wrangler types` writes the Env types its build checks for
    build: ['npx wrangler types', 'npm run build'],
    page: '/sverdle/how-to-play',
    probes: [
      { name: 'home page', path: '/', headers: NAVIGATE },
      { name: 'prerendered page', path: '/about', headers: NAVIGATE },
      { name: 'server-rendered page', path: '/sverdle', headers: NAVIGATE, compare: 'status' },
      { name: 'page', path: '/sverdle/how-to-play', headers: NAVIGATE },
      { name: 'asset', path: '/robots.txt' },
      { name: 'hashed asset', path: '/favicon.svg' },
      { name: '404', path: '/no/such/page', headers: NAVIGATE },
      { name: 'the worker is no file', path: '/_worker.js' },
      { name: '_headers is no file', path: '/_headers' },
      { name: 'redirect (html_handling)', path: '/about.html' },
      { name: 'redirect (trailing slash)', path: '/about/' },
      {
        name: 'form action, no JavaScript',
        method: 'POST',
        path: '/sverdle?/enter',
        headers: FORM,
        sameOrigin: true,
        body: 'guess=h&guess=e&guess=l&guess=l&guess=o',
        compare: 'status',
      },
      {
        name: 'form action, cross-site',
        method: 'POST',
        path: '/sverdle?/restart',
        headers: { ...FORM, origin: 'http://elsewhere.localhost' },
        body: '',
      },
    ],
  },
  {
    name: 'react-vite',
    label: 'React + Vite (create-cloudflare, Cloudflare Vite plugin)',
    create: [
      'create-cloudflare',
      '{dir}',
      '--framework=react',
      '--platform=workers',
      '--variant=react-ts',
      '--no-deploy',
      '--no-git',
      '--accept-defaults',
    ],
    build: ['npm run build'],
    page: '/',
    probes: [
      { name: 'home page', path: '/', headers: NAVIGATE },
      { name: 'server route', path: '/api/', headers: { accept: '*/*' } },
      { name: 'SPA navigation', path: '/about', headers: NAVIGATE },
      { name: 'not a navigation: the Worker', path: '/about', headers: { accept: '*/*' } },
      { name: 'asset', path: '/favicon.svg' },
      { name: '404 (a missing asset)', path: '/assets/missing.js' },
      { name: 'redirect (html_handling)', path: '/index.html' },
      { name: 'the worker is no file', path: '/index.js' },
    ],
  },
  {
    name: 'vue-vite',
    label: 'Vue + Vite (create-cloudflare, Cloudflare Vite plugin)',
    create: [
      'create-cloudflare',
      '{dir}',
      '--framework=vue',
      '--platform=workers',
      '--lang=ts',
      '--no-deploy',
      '--no-git',
      '--accept-defaults',
    ],
    build: ['npm run build'],
    page: '/',
    probes: [
      { name: 'home page', path: '/', headers: NAVIGATE },
      { name: 'server route', path: '/api/', headers: { accept: '*/*' } },
      { name: 'SPA navigation (the router)', path: '/about', headers: NAVIGATE },
      { name: 'not a navigation: the Worker', path: '/about', headers: { accept: '*/*' } },
      { name: 'asset', path: '/favicon.ico' },
      { name: '404 (a missing asset)', path: '/assets/missing.js' },
      { name: 'redirect (html_handling)', path: '/index.html' },
    ],
  },
  {
    name: 'nextjs',
    label: 'Next.js (create-next-app, OpenNext for Cloudflare)',
    create: [
      'create-next-app',
      '{dir}',
      '--yes',
      '--ts',
      '--app',
      '--use-npm',
      '--disable-git',
      '--skip-install',
    ],
    // OpenNext's guide: its adapter and wrangler as dev dependencies, then its `migrate` writes the
    // config. Next 15.5: with 16.4.6 the app's own `wrangler dev` control never finished its first
    // render (docs/decisions/cli-and-dev.md), so nothing could be compared
    setup: [
      'npm install --package-lock-only --omit-lockfile-registry-resolved --no-audit --no-fund next@15.5.29 eslint-config-next@15.5.29',
      'npm install --package-lock-only --omit-lockfile-registry-resolved --no-audit --no-fund -D @opennextjs/cloudflare@1.20.17 wrangler@4.164.0',
    ],
    build: ['npx opennextjs-cloudflare migrate', 'npx opennextjs-cloudflare build'],
    page: '/',
    probes: [
      // where the RSC payload is split into <script> pieces follows the stream's chunk timing, not the
      // content: the page's text is compared in Chromium below
      { name: 'home page', path: '/', headers: NAVIGATE, compare: 'status' },
      { name: '404', path: '/no/such/page', headers: NAVIGATE },
      { name: 'asset', path: '/next.svg' },
      { name: 'RSC payload', path: '/', headers: { rsc: '1', accept: '*/*' }, compare: 'status' },
      { name: 'favicon', path: '/favicon.ico' },
    ],
  },
];

/** The console host's pages (outside `/v0`). */
import { Hono, type Context } from 'hono';
import type { Env } from '../http/env.ts';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.ts';
import { confirmPage, devicePage, homePage, signInPage, signupPage } from './pages.ts';

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function page(c: Context<Env>, body: ReturnType<typeof homePage>) {
  c.header('Content-Security-Policy', CSP);
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Cache-Control', 'no-store');
  return c.html(body);
}

export function consolePages(): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/', (c) => page(c, homePage()));
  r.get('/sign-in', (c) => page(c, signInPage({ devOutbox: !c.var.deps.config.mail.smtpUrl })));
  // Renders only: a GET (a mail scanner, a link preview) consumes nothing; the button POSTs the token.
  r.get('/auth/confirm', (c) => page(c, confirmPage()));
  r.get('/signup', (c) => page(c, signupPage()));
  r.get('/device', (c) => page(c, devicePage()));
  r.get('/assets/console.js', (c) => c.body(CONSOLE_JS, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' }));
  r.get('/assets/console.css', (c) => c.body(CONSOLE_CSS, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' }));
  return r;
}

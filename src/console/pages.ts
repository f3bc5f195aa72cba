/**
 * The console's sign-in pages: plain, accessible HTML that calls `/v0` from one small script
 * (`/assets/console.js`). Nothing secret is rendered into a page: the link token stays in the URL
 * fragment until the person clicks "Sign in", and the session cookie is HttpOnly.
 */
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

type Page = { title: string; page: string; body: HtmlEscapedString | Promise<HtmlEscapedString> };

export function layout({ title, page, body }: Page): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title} · Platform</title>
<link rel="stylesheet" href="/assets/console.css">
<script type="module" src="/assets/console.js"></script>
</head>
<body data-page="${page}">
<header><a class="brand" href="/">Platform</a><span id="who" aria-live="polite"></span></header>
<main>
<h1>${title}</h1>
${body}
<p id="msg" role="status" aria-live="polite"></p>
</main>
</body>
</html>`;
}

export function signInPage(options: { devOutbox: boolean }) {
  return layout({
    title: 'Sign in',
    page: 'sign-in',
    body: html`<p>Enter your e-mail address. We send you a link that signs you in, or lets you create your account if you are new. No password.</p>
<form id="sign-in">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required>
<button type="submit">Send me a sign-in link</button>
</form>
<div id="sent" hidden>
<p><strong>Check your e-mail.</strong> The link works once and for 15 minutes.</p>
${options.devOutbox ? raw('<p class="hint">This platform has no mail server configured (no <code>SMTP_URL</code>), so the link is printed in the terminal where <code>npm start</code> runs. Open it from there.</p>') : ''}
</div>`,
  });
}

export function confirmPage() {
  return layout({
    title: 'Confirm sign-in',
    page: 'confirm',
    body: html`<p>You opened a sign-in link. Click the button to continue; the link then stops working.</p>
<button id="confirm" type="button">Sign in</button>`,
  });
}

export function signupPage() {
  return layout({
    title: 'Create your account',
    page: 'signup',
    body: html`<p id="for"></p>
<form id="signup">
<label for="username">Username</label>
<input id="username" name="username" required minlength="3" maxlength="32" pattern="[a-z0-9][a-z0-9\\-]{2,31}" autocomplete="username" aria-describedby="username-help">
<small id="username-help">3 to 32 lowercase letters, digits or hyphens.</small>
<label for="account_name">Account name <span class="optional">(optional)</span></label>
<input id="account_name" name="account_name" maxlength="120" aria-describedby="account-help">
<small id="account-help">Your team or company; defaults to your username.</small>
<button type="submit">Create account</button>
</form>`,
  });
}

export function devicePage() {
  return layout({
    title: 'Log in a device',
    page: 'device',
    body: html`<form id="code-form">
<label for="user_code">Code shown in your terminal</label>
<input id="user_code" name="user_code" required autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX" maxlength="9">
<button type="submit">Continue</button>
</form>
<section id="request" hidden aria-labelledby="request-title">
<h2 id="request-title">Allow <span id="client"></span> to use your account?</h2>
<p>It gets an API key of its own, which you can revoke any time. Code <code id="shown-code"></code>, valid until <time id="expires"></time>.</p>
<label for="account">Account it works in by default</label>
<select id="account"></select>
<div class="actions"><button id="approve" type="button">Approve</button><button id="deny" type="button" class="secondary">Deny</button></div>
</section>`,
  });
}

export function homePage() {
  return layout({
    title: 'Console',
    page: 'home',
    body: html`<section id="signed-in" hidden>
<p>Signed in as <strong id="email"></strong>.</p>
<h2>Your accounts</h2>
<ul id="accounts"></ul>
<p>Publish from your terminal: <code>platform login</code>, then <code>platform publish</code>.</p>
<button id="sign-out" type="button" class="secondary">Sign out</button>
</section>
<p id="signed-out" hidden><a href="/sign-in">Sign in</a> to see your accounts.</p>`,
  });
}

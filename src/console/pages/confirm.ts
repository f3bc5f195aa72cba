import { html } from 'hono/html';
import type { ConsolePage } from '../layout.ts';

/** Where an e-mail link lands. A GET only renders (scanners consume nothing); the button POSTs the token. */
export const confirmPage: ConsolePage = {
  id: 'confirm',
  path: '/auth/confirm',
  title: 'Confirm sign-in',
  signedIn: false,
  narrow: true,
  body: () => html`<div class="card"><p>You opened a sign-in link. Click the button to continue; the link then stops working.</p>
<button id="confirm" type="button">Sign in</button></div>`,
  script: `import { $, api, failure, next, say } from '/assets/console.js';
const token = new URLSearchParams(location.hash.slice(1)).get('token');
history.replaceState(null, '', location.pathname);
if (!token) { $('confirm').disabled = true; say('This page needs the link from your e-mail.', true); }
$('confirm').addEventListener('click', async () => {
  $('confirm').disabled = true;
  const r = await api('POST', '/v0/auth/email/confirm', { token });
  if (!r.ok) { $('confirm').disabled = false; return say(failure(r), true); }
  if (r.data.status === 'signup_required') { sessionStorage.setItem('platform.signup', r.data.email); location.assign('/signup'); return; }
  location.assign(next());
});`,
};

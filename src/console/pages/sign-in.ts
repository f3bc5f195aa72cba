import { html, raw } from 'hono/html';
import type { ConsolePage } from '../layout.ts';

/** Sign in (or sign up) with an e-mail link. `devOutbox` says where the link goes without a mail server. */
export function signInPage(devOutbox: boolean): ConsolePage {
  return {
    id: 'sign-in',
    path: '/sign-in',
    title: 'Sign in',
    signedIn: false,
    narrow: true,
    body: () => html`<div class="card"><p>Enter your e-mail address. We send you a link that signs you in, or lets you create your account if you are new. No password.</p>
<form id="sign-in">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required>
<button type="submit">Send me a sign-in link</button>
</form>
<div id="sent" hidden>
<p><strong>Check your e-mail.</strong> The link works once and for 15 minutes.</p>
${devOutbox ? raw('<p class="hint">This platform has no mail server configured (no <code>SMTP_URL</code>), so the link is printed in the terminal where <code>npm start</code> runs. Open it from there.</p>') : ''}
</div></div>`,
  };
}

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
};

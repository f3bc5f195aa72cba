import { html } from 'hono/html';
import type { ConsolePage } from '../layout.ts';

/** The last step of signing up: a username and, optionally, the account's name. */
export const signupPage: ConsolePage = {
  id: 'signup',
  path: '/signup',
  title: 'Create your account',
  signedIn: false,
  narrow: true,
  body: () => html`<div class="card"><p id="for"></p>
<form id="signup">
<label for="username">Username</label>
<input id="username" name="username" required minlength="3" maxlength="32" pattern="[a-z0-9][a-z0-9\\-]{2,31}" autocomplete="username" aria-describedby="username-help">
<small id="username-help">3 to 32 lowercase letters, digits or hyphens.</small>
<label for="account_name">Account name <span class="optional">(optional)</span></label>
<input id="account_name" name="account_name" maxlength="120" aria-describedby="account-help">
<small id="account-help">Your team or company; defaults to your username.</small>
<button type="submit">Create account</button>
</form></div>`,
};

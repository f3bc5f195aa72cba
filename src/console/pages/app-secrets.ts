import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/** Secret names and presence; set and delete. A value is never shown again. */
export const appSecretsPage: ConsolePage = {
  id: 'app-secrets',
  path: '/apps/:app_id/secrets',
  title: 'Secrets',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Secrets')}
<section class="card" id="waiting" role="status" hidden></section>
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading secrets…</p></section>
<section class="card" id="set-card"><h2>Set a secret</h2>
<form id="set" class="row" autocomplete="off">
<div><label for="name">Name</label><input id="name" required pattern="[A-Z][A-Z0-9_]{0,63}" placeholder="API_TOKEN" spellcheck="false"></div>
<div><label for="value">Value</label><input id="value" type="password" required autocomplete="new-password"></div>
<button type="submit">Save</button>
</form><p class="hint">Values are encrypted at rest, readable only by the app's server code, and never shown again.</p></section>`,
};

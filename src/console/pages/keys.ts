import { html } from 'hono/html';
import type { ConsolePage } from '../layout.ts';

/** Your API keys: create (the raw key shown once), rename, revoke. */
export const keysPage: ConsolePage = {
  id: 'keys',
  path: '/keys',
  title: 'API keys',
  nav: 'API keys',
  signedIn: true,
  body: () => html`<section class="card"><h2>Create a key</h2>
<form id="create" class="row"><div><label for="name">Name</label><input id="name" maxlength="120" placeholder="CI deploys" required></div><button type="submit">Create key</button></form>
<div id="created" aria-live="polite"></div></section>
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading keys…</p></section>`,
};

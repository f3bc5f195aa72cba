import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * An app's slugs and custom domains: their status, the DNS records to create (each with a copy
 * button), the last verification's diagnosis in plain words, verify, disable/enable and remove.
 */
export const appDomainsPage: ConsolePage = {
  id: 'app-domains',
  path: '/apps/:app_id/domains',
  title: 'Domains',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Domains')}
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading domains…</p></section>
<section class="card" id="slug-card"><h2>Add a slug</h2>
<form id="add-slug" class="row" autocomplete="off">
<div><label for="slug">Slug</label><input id="slug" required minlength="3" maxlength="63" pattern="[a-zA-Z0-9][a-zA-Z0-9\\-]{1,61}[a-zA-Z0-9]" placeholder="my-shop" spellcheck="false"></div>
<button type="submit">Add slug</button>
</form><p class="hint" id="slug-hint">The app also answers at <code>&lt;slug&gt;.<span id="apps-host">apps host</span></code>.</p></section>
<section class="card" id="domain-card"><h2>Add a custom domain</h2>
<form id="add-domain" class="row" autocomplete="off">
<div><label for="hostname">Domain</label><input id="hostname" required maxlength="253" placeholder="shop.example.com" spellcheck="false"></div>
<button type="submit">Add domain</button>
</form><p class="hint">You will be shown the DNS records to create; the domain serves once they are verified.</p></section>`,
};

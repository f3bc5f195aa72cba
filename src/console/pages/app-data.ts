import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * The data browser: each collection's rows (newest first or by an indexed field, paged, filtered with ctx.data's `where`),
 * a row's fields by type (references link to their row), and create, edit and delete for the roles
 * that may write. Everything goes through `/v0/apps/<id>/data/…`, validated as app code's writes are.
 */
export const appDataPage: ConsolePage = {
  id: 'app-data',
  path: '/apps/:app_id/data',
  title: 'Data',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Data')}
<section class="card loading" id="collections" aria-busy="true"><p class="muted">Loading collections…</p></section>
<section class="card" id="browser" hidden>
<form id="filter" class="row" role="search">
<div><label for="where">Filter <span class="optional">(where, as JSON: {"status": "open"})</span></label><input id="where" spellcheck="false" placeholder="{}"></div>
<div><label for="order">Order</label><select id="order"></select></div>
<button type="submit" class="secondary">Apply</button>
</form>
<div id="rows" aria-live="polite"></div>
</section>
<section class="card" id="row-panel" hidden></section>`,
};

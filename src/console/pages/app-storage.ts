import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * What the app keeps in its Workers bindings: KV namespaces (keys by prefix, a value shown,
 * edited and deleted), R2 buckets (objects by folder, deleted) and queues (depths, purge), for
 * the roles that may write. The view (namespace or bucket, prefix) is kept in the URL.
 */
export const appStoragePage: ConsolePage = {
  id: 'app-storage',
  path: '/apps/:app_id/storage',
  title: 'Storage',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Storage')}
<section class="card loading" id="bindings" aria-busy="true"><p class="muted">Loading bindings…</p></section>
<section class="card" id="browse" hidden></section>`,
};

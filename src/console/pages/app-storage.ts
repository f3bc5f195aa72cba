import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * What the app keeps in its Workers bindings: KV namespaces (keys by prefix or by what their
 * values and metadata hold; a value shown, edited and deleted), R2 buckets (objects by folder,
 * text and images previewed, downloaded, deleted) and queues (depths, messages, dead letters
 * retried, purge), for the roles that may write. The view (namespace, bucket or queue, prefix or
 * search) is kept in the URL.
 */
export const appStoragePage: ConsolePage = {
  id: 'app-storage',
  path: '/apps/:app_id/storage',
  title: 'Storage',
  signedIn: true,
  modules: ['app-storage-queues'],
  body: (p) => html`${appTabs(p.app_id!, 'Storage')}
<section class="card loading" id="bindings" aria-busy="true"><p class="muted">Loading bindings…</p></section>
<section class="card" id="browse" hidden></section>`,
};

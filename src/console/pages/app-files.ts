import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * The file browser: each store's files, newest first, with type, size, uploader and date; images
 * previewed; download (a private store's through a 5-minute signed URL); delete for the roles that
 * may write.
 */
export const appFilesPage: ConsolePage = {
  id: 'app-files',
  path: '/apps/:app_id/files',
  title: 'Files',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Files')}
<section class="card loading" id="stores" aria-busy="true"><p class="muted">Loading stores…</p></section>
<section class="card" id="files" hidden></section>`,
};

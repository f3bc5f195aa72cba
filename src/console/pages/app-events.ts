import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * The app's event log: free-text search over messages and metadata, the type filter as this app's
 * own types, level and release filters, identical events grouped with a count, each event's
 * details as a readable panel (stacks as lines, with the release that threw), a live tail.
 */
export const appEventsPage: ConsolePage = {
  id: 'app-events',
  path: '/apps/:app_id/events',
  title: 'Events',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Events')}
<section class="card"><form id="filters" class="row" role="search">
<div><label for="q">Search</label><input id="q" type="search" maxlength="200" placeholder="Text in a message or its details" spellcheck="false"></div>
<div><label for="type">Type</label><select id="type"><option value="">any</option></select></div>
<div><label for="severity">Level</label><select id="severity"><option value="">any</option><option>debug</option><option>info</option><option>warn</option><option>error</option></select></div>
<div><label for="release">Release</label><select id="release"><option value="">any</option></select></div>
<button type="submit">Filter</button>
<label class="check" for="grouped"><input id="grouped" type="checkbox"> Group identical</label>
<label class="check" for="live"><input id="live" type="checkbox"> Live tail</label>
</form></section>
<section class="card" id="detail" hidden></section>
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading events…</p></section>
<button id="more" type="button" class="secondary" hidden>Older events</button>`,
};

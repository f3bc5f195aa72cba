import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/** The app's event log with filters, paging and a live tail. */
export const appEventsPage: ConsolePage = {
  id: 'app-events',
  path: '/apps/:app_id/events',
  title: 'Events',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Events')}
<section class="card"><form id="filters" class="row">
<div><label for="type">Type</label><input id="type" placeholder="release.created" spellcheck="false"></div>
<div><label for="severity">Severity</label><select id="severity"><option value="">any</option><option>debug</option><option>info</option><option>warn</option><option>error</option></select></div>
<div><label for="release">Release</label><input id="release" placeholder="rel_…" spellcheck="false"></div>
<button type="submit">Filter</button>
<label class="check" for="live"><input id="live" type="checkbox"> Live tail</label>
</form></section>
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading events…</p></section>
<button id="more" type="button" class="secondary" hidden>Older events</button>`,
  script: `import { $, ago, api, appHeading, appIdOf, boot, el, failure, show, table, when } from '/assets/console.js';
const id = appIdOf();
const LEVEL = { debug: 'muted', info: 'good', warn: 'warn', error: 'bad' };
let events = [];
let cursor = null;
let timer;
const query = (extra) => {
  const q = new URLSearchParams();
  if ($('type').value.trim()) q.set('type', $('type').value.trim());
  if ($('severity').value) q.set('severity', $('severity').value);
  if ($('release').value.trim()) q.set('release_id', $('release').value.trim());
  for (const [k, v] of Object.entries(extra)) if (v) q.set(k, v);
  return '/v0/apps/' + id + '/events?' + q;
};
function render() {
  if (!events.length) return show('content', el('p', { class: 'empty' }, 'No events match.'));
  show('content', table(events, [
    ['When', (e) => ago(e.created_at)],
    ['Level', (e) => el('span', { class: 'badge ' + LEVEL[e.severity] }, e.severity)],
    ['Type', (e) => el('code', {}, e.type)],
    ['Message', (e) => e.message],
    ['Details', (e) => Object.keys(e.metadata).length ? el('code', {}, JSON.stringify(e.metadata)) : ''],
  ]));
  $('more').hidden = !cursor;
}
async function first() {
  const r = await api('GET', query({ limit: '50' }));
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  events = r.data.events;
  cursor = r.data.cursor;
  render();
}
const num = (e) => Number(e.app_event_id.replace('evt_', ''));
async function tail() {
  const r = await api('GET', query({ limit: '100' }));
  if (!r.ok) return;
  const newest = events.length ? num(events[0]) : 0;
  const fresh = r.data.events.filter((e) => num(e) > newest);
  if (fresh.length) { events = fresh.concat(events); render(); }
}
$('filters').addEventListener('submit', (e) => { e.preventDefault(); first(); });
$('more').addEventListener('click', async () => {
  const r = await api('GET', query({ limit: '50', cursor }));
  if (!r.ok) return;
  events = events.concat(r.data.events);
  cursor = r.data.cursor;
  render();
});
$('live').addEventListener('change', () => { clearInterval(timer); if ($('live').checked) timer = setInterval(tail, 2000); });
if (await boot(true)) { await appHeading(id, 'events'); await first(); }`,
};

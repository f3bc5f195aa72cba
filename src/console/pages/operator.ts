import { html } from 'hono/html';
import { formatBytes } from '../../lib/bytes.ts';
import { type ConsolePage, operatorTabs } from '../layout.ts';

/** The operator's list of every account on the server: plan, usage, flags; search by name, e-mail or id. */
export const operatorPage: ConsolePage = {
  id: 'operator',
  path: '/operator',
  title: 'Operator',
  nav: 'Operator',
  operator: true,
  signedIn: true,
  body: () => html`${operatorTabs('Accounts')}
<section class="card"><form id="search" class="row" role="search"><div><label for="q">Find an account</label><input id="q" type="search" maxlength="200" placeholder="Name, member e-mail or acct_…"></div><button type="submit" class="secondary">Search</button></form></section>
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading accounts…</p></section>`,
  script: `import { $, ago, api, boot, el, failure, show, table, when } from '/assets/console.js';
${formatBytes.toString()}
let shown = [];
const flagBadges = (flags) => flags.length ? flags.map((f) => el('span', { class: 'badge bad', title: f.reason }, f.flag)) : el('span', { class: 'muted' }, '—');
async function load(cursor) {
  const q = $('q').value.trim();
  const params = new URLSearchParams();
  if (q) params.set('q', q);
  if (cursor) params.set('cursor', cursor);
  const r = await api('GET', '/v0/operator/accounts' + (params.size ? '?' + params : ''));
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  shown = cursor ? shown.concat(r.data.accounts) : r.data.accounts;
  if (!shown.length) return show('content', el('p', { class: 'empty' }, q ? 'No account matches "' + q + '".' : 'No accounts yet.'));
  const more = r.data.cursor ? el('p', {}, el('button', { type: 'button', class: 'small', onclick: () => load(r.data.cursor) }, 'Show more')) : '';
  show('content', el('h2', {}, q ? 'Accounts matching "' + q + '"' : 'Accounts, newest first'), table(shown, [
    ['Account', (a) => [el('a', { href: '/operator/accounts/' + a.id }, a.name), el('span', { class: 'sub' }, a.owner_email)]],
    ['Plan', (a) => [el('span', { class: 'badge' }, a.plan_key), a.billing_access_state !== 'active' ? el('span', { class: 'sub' }, a.billing_access_state) : '']],
    ['Apps', (a) => String(a.apps)],
    ['Requests', (a) => [a.requests_this_month.toLocaleString(), el('span', { class: 'sub' }, 'this month')]],
    ['Stored', (a) => formatBytes(a.stored_bytes)],
    ['Flags', (a) => flagBadges(a.flags)],
    ['Created', (a) => ago(a.created_at)],
  ]), more);
}
$('search').addEventListener('submit', (e) => { e.preventDefault(); load(); });
if (await boot(true)) await load();`,
};

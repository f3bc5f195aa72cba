// @ts-check
import { $, ago, api, boot, el, failure, show, showMore, table } from '../console.js';
import { formatBytes } from '../bytes.js';
let shown = [];
const flagBadges = (flags) =>
  flags.length
    ? flags.map((f) => el('span', { class: 'badge bad', title: f.reason }, f.flag))
    : el('span', { class: 'muted' }, '—');
async function load(cursor) {
  const q = $('q').value.trim();
  const params = new URLSearchParams();
  if (q) params.set('q', q);
  if (cursor) params.set('cursor', cursor);
  const r = await api('GET', '/v0/operator/accounts' + (params.size ? '?' + params : ''));
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  shown = cursor ? shown.concat(r.data.accounts) : r.data.accounts;
  if (!shown.length)
    return show(
      'content',
      el('p', { class: 'empty' }, q ? 'No account matches "' + q + '".' : 'No accounts yet.'),
    );
  const more = showMore(r.data.cursor, load);
  show(
    'content',
    el('h2', {}, q ? 'Accounts matching "' + q + '"' : 'Accounts, newest first'),
    table(shown, [
      [
        'Account',
        (a) => [
          el('a', { href: '/operator/accounts/' + a.id }, a.name),
          el('span', { class: 'sub' }, a.owner_email),
        ],
      ],
      [
        'Plan',
        (a) => [
          el('span', { class: 'badge' }, a.plan_key),
          a.billing_access_state !== 'active'
            ? el('span', { class: 'sub' }, a.billing_access_state)
            : '',
        ],
      ],
      ['Apps', (a) => String(a.apps)],
      [
        'Requests',
        (a) => [a.requests_this_month.toLocaleString(), el('span', { class: 'sub' }, 'this month')],
      ],
      ['Stored', (a) => formatBytes(a.stored_bytes)],
      ['Flags', (a) => flagBadges(a.flags)],
      ['Created', (a) => ago(a.created_at)],
    ]),
    more,
  );
}
$('search').addEventListener('submit', (e) => {
  e.preventDefault();
  load();
});
if (await boot(true)) await load();

// @ts-check
import { ago, api, boot, el, failure, show, table } from '../console.js';
let shown = [];
const WHAT = {
  set_plan: 'Set plan',
  set_flag: 'Flag',
  clear_flag: 'Lift flag',
  set_billing_state: 'Billing access',
  grant_operator: 'Named operator',
  revoke_operator: 'Removed operator',
  start_backup: 'Started a backup',
  backup_failed: 'Backup failed',
};
function detail(a) {
  const d = a.detail || {};
  if (a.action === 'set_plan')
    return d.previous_plan_key + ' → ' + d.plan_key + (d.forced ? ' (forced)' : '');
  if (a.action === 'set_flag') return d.flag + ': ' + (d.reason || '');
  if (a.action === 'clear_flag') return d.flag;
  if (a.action === 'set_billing_state') return d.state;
  if (a.action === 'grant_operator' || a.action === 'revoke_operator') return d.email;
  if (a.action === 'backup_failed') return d.error;
  if (a.action === 'start_backup') return d.backup_id;
  return JSON.stringify(d);
}
async function load(cursor) {
  const r = await api(
    'GET',
    '/v0/operator/actions' + (cursor ? '?cursor=' + encodeURIComponent(cursor) : ''),
  );
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  shown = cursor ? shown.concat(r.data.actions) : r.data.actions;
  if (!shown.length) return show('content', el('p', { class: 'empty' }, 'No operator action yet.'));
  const more = r.data.cursor
    ? el(
        'p',
        {},
        el(
          'button',
          { type: 'button', class: 'small', onclick: () => load(r.data.cursor) },
          'Show older',
        ),
      )
    : '';
  show(
    'content',
    table(shown, [
      ['When', (a) => ago(a.at)],
      [
        'Who',
        (a) =>
          a.actor_email
            ? [
                a.actor_email,
                el('span', { class: 'sub' }, a.actor_label.replace(a.actor_email + ' ', '')),
              ]
            : a.actor_label,
      ],
      ['What', (a) => WHAT[a.action] || a.action],
      [
        'On',
        (a) =>
          a.app_id
            ? ['app ', el('code', {}, a.app_id)]
            : a.account_id
              ? el('a', { href: '/operator/accounts/' + a.account_id }, a.account_id)
              : '—',
      ],
      ['Detail', (a) => detail(a)],
    ]),
    more,
  );
}
if (await boot(true)) await load();

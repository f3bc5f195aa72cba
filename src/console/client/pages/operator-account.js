// @ts-check
import { $, api, boot, el, failure, say, show, table, when } from '../console.js';
const id = location.pathname.split('/')[3];
async function load() {
  const r = await api('GET', '/v0/operator/accounts?q=' + encodeURIComponent(id));
  if (!r.ok) return show('summary', el('p', { class: 'error' }, failure(r)));
  const a = r.data.accounts.find((x) => x.id === id);
  if (!a) return show('summary', el('p', { class: 'error' }, 'No account ' + id + '.'));
  document.querySelector('h1').textContent = 'Account: ' + a.name;
  $('plan').value = a.plan_key;
  $('state').value = a.billing_access_state;
  show(
    'summary',
    el('p', { class: 'plan-line' }, a.name, ' ', el('span', { class: 'badge' }, a.plan_key)),
    el(
      'p',
      { class: 'muted' },
      el('code', {}, a.id),
      ' · owner ',
      a.owner_email,
      ' · ',
      a.members + ' member(s) · created ',
      when(a.created_at),
    ),
    el(
      'p',
      {},
      a.apps +
        ' app(s) · ' +
        a.requests_this_month.toLocaleString() +
        ' requests this month · plan from ' +
        a.entitlement_source +
        ' · billing ' +
        a.billing_access_state,
    ),
  );
  const suspended = a.flags.find((f) => f.flag === 'suspended');
  if (suspended) {
    show(
      'suspension',
      el(
        'p',
        {},
        el('span', { class: 'badge bad' }, 'suspended'),
        ' since ',
        when(suspended.created_at),
        ': ',
        suspended.reason,
      ),
      el(
        'button',
        { type: 'button', class: 'secondary', id: 'lift', onclick: lift },
        'Lift the suspension',
      ),
    );
  } else {
    const form = el(
      'form',
      { class: 'row', id: 'suspend-form' },
      el(
        'div',
        {},
        el(
          'label',
          { for: 'reason' },
          'Reason ',
          el('span', { class: 'optional' }, '(the owner sees it)'),
        ),
        el('input', { id: 'reason', maxlength: 500, required: true }),
      ),
      el('button', { type: 'submit', class: 'danger' }, 'Suspend the account'),
    );
    form.addEventListener('submit', suspend);
    show(
      'suspension',
      el(
        'p',
        { class: 'muted' },
        'A suspended account can read, not change anything, and its apps answer 403.',
      ),
      form,
    );
  }
  await loadApps();
}
async function loadApps() {
  const r = await api('GET', '/v0/operator/accounts/' + id + '/apps');
  if (!r.ok) return show('apps', el('p', { class: 'error' }, failure(r)));
  if (!r.data.apps.length)
    return show('apps', el('h2', {}, 'Apps'), el('p', { class: 'empty' }, 'No apps.'));
  show(
    'apps',
    el('h2', {}, 'Apps'),
    table(r.data.apps, [
      ['App', (p) => [p.name, el('span', { class: 'sub' }, p.id)]],
      [
        'State',
        (p) =>
          p.deleted_at
            ? el('span', { class: 'badge muted' }, 'unpublished')
            : p.live_release_id
              ? el('span', { class: 'badge live' }, 'live')
              : el('span', { class: 'badge muted' }, 'no live release'),
      ],
      [
        'Flags',
        (p) =>
          p.flags.length
            ? p.flags.map((f) => el('span', { class: 'badge bad', title: f.reason }, f.flag))
            : '—',
      ],
      [
        '',
        (p) =>
          el(
            'span',
            { class: 'actions' },
            ['suspended', 'takedown'].map((flag) =>
              p.flags.some((f) => f.flag === flag)
                ? el(
                    'button',
                    { type: 'button', class: 'small', onclick: () => clearApp(p, flag) },
                    'Lift ' + flag,
                  )
                : el(
                    'button',
                    { type: 'button', class: 'small danger', onclick: () => flagApp(p, flag) },
                    flag === 'takedown' ? 'Take down' : 'Suspend',
                  ),
            ),
          ),
      ],
    ]),
  );
}
async function flagApp(p, flag) {
  const reason = prompt(
    (flag === 'takedown' ? 'Take down ' : 'Suspend ') + p.name + ': the reason (the owner sees it)',
  );
  if (!reason?.trim()) return;
  const r = await api('PUT', '/v0/operator/apps/' + p.id + '/flags/' + flag, {
    reason: reason.trim(),
  });
  if (!r.ok) return say(failure(r), true);
  await loadApps();
  say(p.name + (flag === 'takedown' ? ' is taken down.' : ' is suspended.'));
}
async function clearApp(p, flag) {
  const r = await api('DELETE', '/v0/operator/apps/' + p.id + '/flags/' + flag);
  if (!r.ok) return say(failure(r), true);
  await loadApps();
  say('Lifted ' + flag + ' on ' + p.name + '.');
}
async function suspend(e) {
  e.preventDefault();
  const r = await api('PUT', '/v0/operator/accounts/' + id + '/flags/suspended', {
    reason: $('reason').value.trim(),
  });
  if (!r.ok) return say(failure(r), true);
  await load();
  say('The account is suspended.');
}
async function lift() {
  const r = await api('DELETE', '/v0/operator/accounts/' + id + '/flags/suspended');
  if (!r.ok) return say(failure(r), true);
  await load();
  say('The suspension is lifted.');
}
$('plan-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const r = await api('PUT', '/v0/operator/accounts/' + id + '/plan', {
    plan: $('plan').value,
    force: $('force').checked,
  });
  if (!r.ok) return say(failure(r), true);
  await load();
  say(
    'The account is on ' +
      r.data.plan_key +
      (r.data.actions?.length ? '; ' + r.data.actions.length + ' route(s) disabled.' : '.'),
  );
});
$('billing-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const state = $('state').value;
  const r = await api(
    'PUT',
    '/v0/operator/accounts/' + id + '/billing-state',
    state === 'past_due_grace' ? { state, grace_days: Number($('grace').value) } : { state },
  );
  if (!r.ok) return say(failure(r), true);
  await load();
  say('Billing access is ' + r.data.billing_access_state + '.');
});
if (await boot(true)) await load();

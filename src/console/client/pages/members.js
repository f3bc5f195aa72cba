// @ts-check
import { $, accountId, ago, api, boot, el, failure, may, say, show, table } from '../console.js';
const ROLES = ['owner', 'admin', 'developer', 'viewer'];
let me;
async function load() {
  const acc = accountId();
  const r = await api('GET', '/v0/accounts/' + acc + '/members');
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  const manage = may(me, acc, 'members.manage');
  $('invite-card').hidden = !manage;
  const parts = [
    el('h2', {}, 'Members'),
    table(r.data.members, [
      [
        'Who',
        (m) =>
          el(
            'span',
            {},
            m.username || m.email,
            m.username ? el('div', { class: 'muted' }, m.email) : '',
          ),
      ],
      [
        'Role',
        (m) =>
          manage && m.user_id !== me.user.id
            ? el(
                'select',
                { 'aria-label': 'Role of ' + m.email, onchange: (e) => setRole(m, e.target.value) },
                ROLES.map((x) => el('option', { selected: x === m.role }, x)),
              )
            : m.role,
      ],
      ['Joined', (m) => ago(m.joined_at)],
      [
        '',
        (m) =>
          m.user_id === me.user.id
            ? el(
                'button',
                { type: 'button', class: 'small danger', onclick: () => remove(m, true) },
                'Leave',
              )
            : manage
              ? el(
                  'button',
                  { type: 'button', class: 'small danger', onclick: () => remove(m, false) },
                  'Remove',
                )
              : '',
      ],
    ]),
  ];
  if (r.data.invitations.length)
    parts.push(
      el('h2', {}, 'Open invitations'),
      table(r.data.invitations, [
        ['E-mail', (i) => i.email],
        ['Role', (i) => i.role],
        ['Expires', (i) => ago(i.expires_at)],
        [
          '',
          (i) =>
            manage
              ? el(
                  'button',
                  { type: 'button', class: 'small', onclick: () => withdraw(i) },
                  'Withdraw',
                )
              : '',
        ],
      ]),
    );
  show('content', ...parts);
}
async function setRole(m, role) {
  const r = await api('PATCH', '/v0/accounts/' + accountId() + '/members/' + m.user_id, { role });
  say(r.ok ? m.email + ' is now ' + role + '.' : failure(r), !r.ok);
  await load();
}
async function remove(m, self) {
  if (
    !confirm(
      self
        ? 'Leave this account?'
        : 'Remove ' + m.email + ' from this account? Their keys stop reaching it at once.',
    )
  )
    return;
  const r = await api('DELETE', '/v0/accounts/' + accountId() + '/members/' + m.user_id);
  if (!r.ok) return say(failure(r), true);
  if (self) {
    localStorage.removeItem('platform.account');
    location.assign('/');
    return;
  }
  say('Removed ' + m.email + '.');
  await load();
}
async function withdraw(i) {
  const r = await api('DELETE', '/v0/accounts/' + accountId() + '/invitations/' + i.invitation_id);
  say(r.ok ? 'Withdrew the invitation to ' + i.email + '.' : failure(r), !r.ok);
  await load();
}
$('invite').addEventListener('submit', async (e) => {
  e.preventDefault();
  const r = await api('POST', '/v0/accounts/' + accountId() + '/members', {
    email: $('email').value,
    role: $('role').value,
  });
  if (!r.ok) return say(failure(r), true);
  say('Invitation sent to ' + r.data.email + '.');
  $('email').value = '';
  await load();
});
me = await boot(true);
if (me) await load();

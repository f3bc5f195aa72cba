// @ts-check
import {
  $,
  may,
  ago,
  api,
  appHeading,
  appIdOf,
  boot,
  copyButton,
  el,
  failure,
  say,
  show,
  showMore,
  table,
  when,
} from '../console.js';
const id = appIdOf();
let canManage = false;
let declared = [];
let shown = [];

async function loadUsers(cursor) {
  const r = await api(
    'GET',
    '/v0/apps/' + id + '/app-users' + (cursor ? '?cursor=' + encodeURIComponent(cursor) : ''),
  );
  if (!r.ok) return show('users', el('p', { class: 'error' }, failure(r)));
  shown = cursor ? shown.concat(r.data.app_users) : r.data.app_users;
  if (!shown.length)
    return show(
      'users',
      el('h2', {}, 'App users'),
      el('p', { class: 'empty' }, 'Nobody has signed up or accepted an invitation yet.'),
    );
  const more = showMore(r.data.cursor, loadUsers);
  show(
    'users',
    el('h2', {}, 'App users'),
    table(shown, [
      ['E-mail', (u) => [u.email, u.verified ? '' : el('span', { class: 'sub' }, 'not verified')]],
      [
        'Roles',
        (u) =>
          u.roles.length
            ? u.roles.map((x) => el('span', { class: 'badge' }, x))
            : el('span', { class: 'muted' }, '—'),
      ],
      [
        'Status',
        (u) =>
          u.disabled
            ? el('span', { class: 'badge bad' }, 'disabled')
            : el('span', { class: 'badge good' }, 'active'),
      ],
      ['Last sign-in', (u) => ago(u.last_sign_in_at)],
      ['Joined', (u) => ago(u.created_at)],
      [
        '',
        (u) =>
          canManage
            ? el(
                'span',
                { class: 'actions' },
                el('button', { type: 'button', class: 'small', onclick: () => roles(u) }, 'Roles'),
                el(
                  'button',
                  { type: 'button', class: 'small', onclick: () => signOut(u) },
                  'Sign out',
                ),
                u.disabled
                  ? el(
                      'button',
                      {
                        type: 'button',
                        class: 'small',
                        onclick: () =>
                          change(u, { disabled: false }, u.email + ' can sign in again.'),
                      },
                      'Enable',
                    )
                  : el(
                      'button',
                      {
                        type: 'button',
                        class: 'small danger',
                        onclick: () =>
                          change(u, { disabled: true }, u.email + ' is disabled and signed out.'),
                      },
                      'Disable',
                    ),
                el(
                  'button',
                  { type: 'button', class: 'small danger', onclick: () => remove(u) },
                  'Delete',
                ),
              )
            : '',
      ],
    ]),
    more,
  );
}

async function change(u, body, done) {
  const r = await api('PATCH', '/v0/apps/' + id + '/app-users/' + u.id, body);
  if (!r.ok) return say(failure(r), true);
  await loadUsers();
  say(done);
}
async function roles(u) {
  const answer = prompt(
    'Roles for ' +
      u.email +
      ', comma-separated (declared: ' +
      (declared.join(', ') || 'none') +
      ')',
    u.roles.join(', '),
  );
  if (answer === null) return;
  await change(
    u,
    {
      roles: answer
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    },
    'Roles of ' + u.email + ' changed.',
  );
}
async function signOut(u) {
  const r = await api('POST', '/v0/apps/' + id + '/app-users/' + u.id + '/sign-out');
  if (!r.ok) return say(failure(r), true);
  await loadUsers();
  say(
    u.email +
      ' is signed out everywhere (' +
      r.data.sessions_revoked +
      ' session' +
      (r.data.sessions_revoked === 1 ? '' : 's') +
      ').',
  );
}
async function remove(u) {
  if (!confirm('Delete ' + u.email + '? They are signed out; the rows they created stay.')) return;
  const r = await api('DELETE', '/v0/apps/' + id + '/app-users/' + u.id);
  if (!r.ok) return say(failure(r), true);
  await loadUsers();
  say(u.email + ' is deleted.');
}

async function loadInvites() {
  const r = await api('GET', '/v0/apps/' + id + '/invites');
  if (!r.ok) return show('invites', el('p', { class: 'error' }, failure(r)));
  if (!r.data.invites.length)
    return show(
      'invites',
      el('h2', {}, 'Pending invitations'),
      el('p', { class: 'empty' }, 'None.'),
    );
  show(
    'invites',
    el('h2', {}, 'Pending invitations'),
    table(r.data.invites, [
      ['E-mail', (i) => i.email],
      ['Roles', (i) => i.roles.map((x) => el('span', { class: 'badge' }, x))],
      ['Expires', (i) => ago(i.expires_at)],
      [
        '',
        (i) =>
          canManage
            ? el(
                'button',
                { type: 'button', class: 'small danger', onclick: () => withdraw(i) },
                'Withdraw',
              )
            : '',
      ],
    ]),
  );
}
async function withdraw(i) {
  const r = await api('DELETE', '/v0/apps/' + id + '/invites/' + i.invite_id);
  if (!r.ok) return say(failure(r), true);
  await loadInvites();
  say('The invitation to ' + i.email + ' is withdrawn: its link no longer works.');
}

$('invite').addEventListener('submit', async (e) => {
  e.preventDefault();
  const roles = $('roles')
    .value.split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const r = await api('POST', '/v0/apps/' + id + '/admin-invites', {
    email: $('email').value,
    roles,
    expires_in_seconds: Number($('days').value) * 86400,
  });
  if (!r.ok) return say(failure(r), true);
  say('');
  $('result').replaceChildren(
    el(
      'div',
      { class: 'secret-once' },
      el(
        'p',
        {},
        'Send this link to ' +
          r.data.email +
          '. It is shown only now and works until ' +
          when(r.data.expires_at) +
          '.',
      ),
      el('p', {}, el('code', {}, r.data.invite_url), ' ', copyButton(r.data.invite_url)),
    ),
  );
  await loadInvites();
});

const s = await boot(true);
if (s) {
  const heading = await appHeading(id, 'app users');
  canManage = heading.ok && may(s, heading.data.account_id, 'app_users.manage');
  const res = heading.ok ? await api('GET', '/v0/apps/' + id + '/resources') : heading;
  const auth = res.ok ? res.data.resources.find((x) => x.resource_type === 'auth') : undefined;
  declared = auth?.spec?.roles ?? [];
  if (res.ok && auth?.spec?.mode !== 'app_users') {
    show(
      'no-auth',
      el('h2', {}, 'This app has no app users'),
      el(
        'p',
        {},
        "Its live release does not declare app-user sign-in, so nobody can sign up, be invited or sign in. Add this to the manifest's resources and publish:",
      ),
      el('pre', {}, '"auth": { "mode": "app_users", "roles": ["editor"] }'),
    );
    $('no-auth').hidden = false;
    $('invite-card').hidden = true;
  }
  if (!canManage) $('invite-card').hidden = true;
  await Promise.all([loadUsers(), loadInvites()]);
}

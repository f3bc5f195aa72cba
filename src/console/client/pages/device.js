// @ts-check
import { $, api, el, failure, say, session } from '../console.js';
const s = await session();
const given = new URLSearchParams(location.search).get('user_code');
if (!s) {
  localStorage.setItem('platform.next', location.pathname + location.search);
  $('code-form').hidden = true;
  $('msg').before(el('p', {}, el('a', { href: '/sign-in' }, 'Sign in'), ' to approve a device.'));
} else {
  $('who').textContent = s.user.email;
  for (const acc of s.accounts)
    $('account').append(
      el(
        'option',
        { value: acc.account_id, selected: acc.account_id === s.default_account_id },
        acc.name + ' (' + acc.role + ')',
      ),
    );
  if (given) $('user_code').value = given;
  let code = '';
  $('code-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    code = $('user_code').value.trim();
    const r = await api('GET', '/v0/auth/device/approval?user_code=' + encodeURIComponent(code));
    if (!r.ok) return say(failure(r), true);
    if (r.data.status !== 'pending')
      return say('This code was already ' + r.data.status + '.', true);
    say('');
    $('client').textContent = r.data.client_name;
    const secs = Math.max(0, Math.round((Date.now() - Date.parse(r.data.created_at)) / 1000));
    $('started').textContent = secs < 90 ? secs + ' s ago' : Math.round(secs / 60) + ' min ago';
    $('started').title = new Date(r.data.created_at).toLocaleString();
    $('started').setAttribute('datetime', r.data.created_at);
    $('address').textContent = r.data.client_address || 'an unknown address';
    $('shown-code').textContent = r.data.user_code;
    $('expires').textContent = new Date(r.data.expires_at).toLocaleTimeString();
    $('code-form').hidden = true;
    $('request').hidden = false;
    $('request-title').focus(); // not Approve: Enter must not approve a code someone else sent
  });
  const decide = async (approve) => {
    const body = approve
      ? { user_code: code, account_id: $('account').value }
      : { user_code: code };
    const r = await api('POST', '/v0/auth/device/' + (approve ? 'approve' : 'deny'), body);
    if (!r.ok) return say(failure(r), true);
    $('request').hidden = true;
    say(
      approve
        ? 'Approved. Return to your terminal; it is logged in.'
        : 'Denied. Nothing was shared with that device.',
    );
  };
  $('approve').addEventListener('click', () => decide(true));
  $('deny').addEventListener('click', () => decide(false));
}

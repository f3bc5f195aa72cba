import { html } from 'hono/html';
import type { ConsolePage } from '../layout.ts';

/** Approving the code `platform login` shows. */
export const devicePage: ConsolePage = {
  id: 'device',
  path: '/device',
  title: 'Log in a device',
  signedIn: false,
  narrow: true,
  body: () => html`<div class="card"><form id="code-form">
<label for="user_code">Code shown in your terminal</label>
<input id="user_code" name="user_code" required autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XXXX-XXXX" maxlength="9">
<button type="submit">Continue</button>
</form>
<section id="request" hidden aria-labelledby="request-title">
<h2 id="request-title" tabindex="-1">Allow “<span id="client"></span>” to use your account?</h2>
<p>This request started <time id="started"></time> from <code id="address"></code>. The name is what the program calls itself; the address is where its request came from.</p>
<p class="secret-once"><strong>Only approve a code you started yourself.</strong> If someone sent you this code or link, deny it: approving gives them access to your account.</p>
<p>It gets an API key of its own, which you can revoke any time. Code <code id="shown-code"></code>, valid until <time id="expires"></time>.</p>
<label for="account">Account it works in by default</label>
<select id="account"></select>
<div class="actions"><button id="approve" type="button">Approve</button><button id="deny" type="button" class="secondary">Deny</button></div>
</section></div>`,
  script: `import { $, api, el, failure, say, session } from '/assets/console.js';
const s = await session();
const given = new URLSearchParams(location.search).get('user_code');
if (!s) {
  localStorage.setItem('platform.next', location.pathname + location.search);
  $('code-form').hidden = true;
  $('msg').before(el('p', {}, el('a', { href: '/sign-in' }, 'Sign in'), ' to approve a device.'));
} else {
  $('who').textContent = s.user.email;
  for (const acc of s.accounts) $('account').append(el('option', { value: acc.account_id, selected: acc.account_id === s.default_account_id }, acc.name + ' (' + acc.role + ')'));
  if (given) $('user_code').value = given;
  let code = '';
  $('code-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    code = $('user_code').value.trim();
    const r = await api('GET', '/v0/auth/device/approval?user_code=' + encodeURIComponent(code));
    if (!r.ok) return say(failure(r), true);
    if (r.data.status !== 'pending') return say('This code was already ' + r.data.status + '.', true);
    say('');
    $('client').textContent = r.data.client_name;
    const secs = Math.max(0, Math.round((Date.now() - Date.parse(r.data.created_at)) / 1000));
    $('started').textContent = secs < 90 ? secs + ' s ago' : Math.round(secs / 60) + ' min ago';
    $('started').title = new Date(r.data.created_at).toLocaleString();
    $('started').dateTime = r.data.created_at;
    $('address').textContent = r.data.client_address || 'an unknown address';
    $('shown-code').textContent = r.data.user_code;
    $('expires').textContent = new Date(r.data.expires_at).toLocaleTimeString();
    $('code-form').hidden = true;
    $('request').hidden = false;
    $('request-title').focus(); // not Approve: Enter must not approve a code someone else sent
  });
  const decide = async (approve) => {
    const body = approve ? { user_code: code, account_id: $('account').value } : { user_code: code };
    const r = await api('POST', '/v0/auth/device/' + (approve ? 'approve' : 'deny'), body);
    if (!r.ok) return say(failure(r), true);
    $('request').hidden = true;
    say(approve ? 'Approved. Return to your terminal; it is logged in.' : 'Denied. Nothing was shared with that device.');
  };
  $('approve').addEventListener('click', () => decide(true));
  $('deny').addEventListener('click', () => decide(false));
}`,
};

import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/** Invite an app user (not a platform member) with app roles. */
export const appInvitesPage: ConsolePage = {
  id: 'app-invites',
  path: '/apps/:app_id/invites',
  title: 'Invite app users',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Invites')}
<section class="card"><p>Invite someone to use this app, with roles the app declares. This grants nothing on the platform itself.</p>
<form id="invite">
<div class="row"><div><label for="email">E-mail</label><input id="email" type="email" required></div>
<div><label for="roles">Roles <span class="optional">(comma-separated)</span></label><input id="roles" spellcheck="false"></div>
<div><label for="days">Valid for (days)</label><input id="days" type="number" min="1" max="30" value="7"></div></div>
<button type="submit">Create invite</button>
</form><div id="result" aria-live="polite"></div></section>`,
  script: `import { $, api, appHeading, appIdOf, boot, copyButton, el, failure, say, when } from '/assets/console.js';
const id = appIdOf();
if (await boot(true)) await appHeading(id, 'invite app users');
$('invite').addEventListener('submit', async (e) => {
  e.preventDefault();
  const roles = $('roles').value.split(',').map((r) => r.trim()).filter(Boolean);
  const r = await api('POST', '/v0/apps/' + id + '/admin-invites', { email: $('email').value, roles, expires_in_seconds: Number($('days').value) * 86400 });
  if (!r.ok) return say(failure(r), true);
  say('');
  $('result').replaceChildren(el('div', { class: 'secret-once' },
    el('p', {}, 'Send this link to ' + r.data.email + '. It is shown only now and works until ' + when(r.data.expires_at) + '.'),
    el('p', {}, el('code', {}, r.data.invite_url), ' ', copyButton(r.data.invite_url))));
});`,
};

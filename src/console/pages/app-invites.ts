import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/**
 * The app's own users (not platform members): the list with roles, verification and last sign-in;
 * change roles, disable and re-enable, sign out everywhere, delete; invite with roles, and the
 * pending invitations, withdrawable. An app that declares no app users is told how to.
 */
export const appInvitesPage: ConsolePage = {
  id: 'app-invites',
  path: '/apps/:app_id/users',
  title: 'App users',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Users')}
<section class="card" id="no-auth" hidden></section>
<section class="card loading" id="users" aria-busy="true"><p class="muted">Loading app users…</p></section>
<section class="card" id="invite-card"><h2>Invite someone</h2><p>Invite someone to use this app, with roles the app declares. This grants nothing on the platform itself.</p>
<form id="invite">
<div class="row"><div><label for="email">E-mail</label><input id="email" type="email" required></div>
<div><label for="roles">Roles <span class="optional">(comma-separated)</span></label><input id="roles" spellcheck="false"></div>
<div><label for="days">Valid for (days)</label><input id="days" type="number" min="1" max="30" value="7"></div></div>
<button type="submit">Create invite</button>
</form><div id="result" aria-live="polite"></div></section>
<section class="card loading" id="invites" aria-busy="true"><p class="muted">Loading invitations…</p></section>`,
};

import { html } from 'hono/html';
import type { ConsolePage } from '../layout.ts';

/** Who is in the selected account, invitations, roles. */
export const membersPage: ConsolePage = {
  id: 'members',
  path: '/members',
  title: 'Members',
  nav: 'Members',
  signedIn: true,
  body: () => html`<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading members…</p></section>
<section class="card" id="invite-card" hidden><h2>Invite someone</h2>
<form id="invite" class="row"><div><label for="email">E-mail</label><input id="email" type="email" required></div>
<div><label for="role">Role</label><select id="role"><option>viewer</option><option selected>developer</option><option>admin</option><option>owner</option></select></div>
<button type="submit">Send invitation</button></form><p class="hint">They get a link by e-mail, valid 7 days; new people sign up through it.</p></section>`,
};

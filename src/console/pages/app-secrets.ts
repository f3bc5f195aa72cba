import { html } from 'hono/html';
import { appTabs, type ConsolePage } from '../layout.ts';

/** Secret names and presence; set and delete. A value is never shown again. */
export const appSecretsPage: ConsolePage = {
  id: 'app-secrets',
  path: '/apps/:app_id/secrets',
  title: 'Secrets',
  signedIn: true,
  body: (p) => html`${appTabs(p.app_id!, 'Secrets')}
<section class="card loading" id="content" aria-busy="true"><p class="muted">Loading secrets…</p></section>
<section class="card"><h2>Set a secret</h2>
<form id="set" class="row" autocomplete="off">
<div><label for="name">Name</label><input id="name" required pattern="[A-Z][A-Z0-9_]{0,63}" placeholder="API_TOKEN" spellcheck="false"></div>
<div><label for="value">Value</label><input id="value" type="password" required autocomplete="new-password"></div>
<button type="submit">Save</button>
</form><p class="hint">Values are encrypted at rest, readable only by the app's server code, and never shown again.</p></section>`,
  script: `import { $, ago, api, appHeading, appIdOf, boot, el, failure, say, show, table, when } from '/assets/console.js';
const id = appIdOf();
async function load() {
  const r = await api('GET', '/v0/apps/' + id + '/secrets');
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  if (!r.data.secrets.length) return show('content', el('p', { class: 'empty' }, 'No secrets set, and the app requires none.'));
  show('content', table(r.data.secrets, [
    ['Name', (s) => el('code', {}, s.name)],
    ['State', (s) => s.present ? el('span', { class: 'badge good' }, 'set') : el('span', { class: 'badge warn' }, 'missing')],
    ['Updated', (s) => ago(s.updated_at)],
    ['', (s) => s.present ? el('button', { type: 'button', class: 'small danger', onclick: () => remove(s.name) }, 'Delete') : el('button', { type: 'button', class: 'small', onclick: () => { $('name').value = s.name; $('value').focus(); } }, 'Set')],
  ]));
}
async function remove(name) {
  if (!confirm('Delete the secret ' + name + '? Server code reading it gets nothing from now on.')) return;
  const r = await api('DELETE', '/v0/apps/' + id + '/secrets/' + encodeURIComponent(name));
  if (!r.ok) return say(failure(r), true);
  say('Deleted ' + name + '.');
  await load();
}
$('set').addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = $('name').value.trim();
  const r = await api('PUT', '/v0/apps/' + id + '/secrets/' + encodeURIComponent(name), { value: $('value').value });
  if (!r.ok) return say(failure(r), true);
  $('value').value = '';
  say('Saved ' + name + '. If a release was waiting for it, publish again.');
  await load();
});
const preset = new URLSearchParams(location.search).get('set');
if (preset) { $('name').value = preset; $('value').focus(); }
if (await boot(true)) { await appHeading(id, 'secrets'); await load(); }`,
};

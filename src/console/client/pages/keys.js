// @ts-check
import { $, ago, api, boot, copyButton, el, failure, say, show, table, when } from '../console.js';
let shown = [];
async function load(cursor) {
  const r = await api(
    'GET',
    '/v0/auth/api-keys' + (cursor ? '?cursor=' + encodeURIComponent(cursor) : ''),
  );
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  shown = cursor ? shown.concat(r.data.api_keys) : r.data.api_keys;
  if (!shown.length)
    return show(
      'content',
      el(
        'p',
        { class: 'empty' },
        'No keys yet. platform login creates one for the CLI; create one here for CI.',
      ),
    );
  const more = r.data.cursor
    ? el(
        'p',
        {},
        el(
          'button',
          { type: 'button', class: 'small', id: 'older', onclick: () => load(r.data.cursor) },
          'Show older keys',
        ),
      )
    : '';
  show(
    'content',
    el('h2', {}, 'Your keys'),
    table(shown, [
      ['Name', (k) => k.name],
      ['Key', (k) => el('code', {}, k.key_prefix + '…')],
      ['Created', (k) => ago(k.created_at)],
      ['Last used', (k) => ago(k.last_used_at)],
      [
        '',
        (k) =>
          k.revoked_at
            ? el('span', { class: 'badge muted' }, 'revoked ' + when(k.revoked_at))
            : el(
                'span',
                { class: 'actions' },
                el(
                  'button',
                  { type: 'button', class: 'small', onclick: () => rename(k) },
                  'Rename',
                ),
                el(
                  'button',
                  { type: 'button', class: 'small danger', onclick: () => revoke(k) },
                  'Revoke',
                ),
              ),
      ],
    ]),
    more,
  );
}
async function rename(k) {
  const name = prompt('New name for ' + k.name, k.name);
  if (!name) return;
  const r = await api('PATCH', '/v0/auth/api-keys/' + k.id, { name });
  if (!r.ok) return say(failure(r), true);
  say('Renamed.');
  await load();
}
async function revoke(k) {
  if (!confirm('Revoke ' + k.name + '? Anything using it stops working at once.')) return;
  const r = await api('DELETE', '/v0/auth/api-keys/' + k.id);
  if (!r.ok) return say(failure(r), true);
  say('Revoked ' + k.name + '.');
  await load();
}
$('create').addEventListener('submit', async (e) => {
  e.preventDefault();
  const r = await api('POST', '/v0/auth/api-keys', { name: $('name').value.trim() });
  if (!r.ok) return say(failure(r), true);
  $('name').value = '';
  $('created').replaceChildren(
    el(
      'div',
      { class: 'secret-once' },
      el('p', {}, el('strong', {}, 'Copy the key now: '), 'it is shown only once.'),
      el('p', {}, el('code', { id: 'raw-key' }, r.data.api_key), ' ', copyButton(r.data.api_key)),
    ),
  );
  await load();
});
if (await boot(true)) await load();

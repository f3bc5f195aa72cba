// @ts-check
import {
  $,
  ago,
  api,
  appHeading,
  appIdOf,
  boot,
  el,
  failure,
  may,
  onlyFor,
  say,
  show,
  table,
} from '../console.js';
const id = appIdOf();
let canWrite = false;
async function load() {
  const r = await api('GET', '/v0/apps/' + id + '/secrets');
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  const note = canWrite ? '' : onlyFor('secrets.write', 'set and delete secrets');
  if (!r.data.secrets.length)
    return show(
      'content',
      el('p', { class: 'empty' }, 'No secrets set, and the app requires none.'),
      note,
    );
  show(
    'content',
    table(r.data.secrets, [
      ['Name', (s) => el('code', {}, s.name)],
      [
        'State',
        (s) =>
          s.present
            ? el('span', { class: 'badge good' }, 'set')
            : el('span', { class: 'badge warn' }, 'missing'),
      ],
      ['Updated', (s) => ago(s.updated_at)],
      [
        '',
        (s) =>
          !canWrite
            ? ''
            : s.present
              ? el(
                  'button',
                  { type: 'button', class: 'small danger', onclick: () => remove(s.name) },
                  'Delete',
                )
              : el(
                  'button',
                  {
                    type: 'button',
                    class: 'small',
                    onclick: () => {
                      $('name').value = s.name;
                      $('value').focus();
                    },
                  },
                  'Set',
                ),
      ],
    ]),
    note,
  );
}
async function remove(name) {
  if (!confirm('Delete the secret ' + name + '? Server code reading it gets nothing from now on.'))
    return;
  const r = await api('DELETE', '/v0/apps/' + id + '/secrets/' + encodeURIComponent(name));
  if (!r.ok) return say(failure(r), true);
  say('Deleted ' + name + '.');
  await load();
}
$('set').addEventListener('submit', async (e) => {
  e.preventDefault();
  const name = $('name').value.trim();
  const r = await api('PUT', '/v0/apps/' + id + '/secrets/' + encodeURIComponent(name), {
    value: $('value').value,
  });
  if (!r.ok) return say(failure(r), true);
  $('value').value = '';
  say('Saved ' + name + '. If a release was waiting for it, publish again.');
  await load();
});
const preset = new URLSearchParams(location.search).get('set');
if (preset) {
  $('name').value = preset;
  $('value').focus();
}
const me = await boot(true);
if (me) {
  const heading = await appHeading(id, 'secrets');
  canWrite = heading.ok && may(me, heading.data.account_id, 'secrets.write');
  $('set-card').hidden = !canWrite;
  await load();
}

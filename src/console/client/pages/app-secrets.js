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
let canPublish = false;
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
  say('Saved ' + name + '.');
  await load();
  await offerWaiting();
});

/**
 * The newest release that waited for secrets, once every one it missed is set, if it is newer
 * than the live one (older code goes live only from the Releases page, with a confirmation).
 */
async function offerWaiting() {
  const [rels, secrets] = await Promise.all([
    api('GET', '/v0/apps/' + id + '/releases'),
    api('GET', '/v0/apps/' + id + '/secrets'),
  ]);
  if (!rels.ok || !secrets.ok || !canPublish) return;
  const present = new Set(secrets.data.secrets.filter((x) => x.present).map((x) => x.name));
  const live = rels.data.releases.find((x) => x.is_live);
  const newest = rels.data.releases.find(
    (x) => x.activation_status === 'pending_secrets' && !x.preview,
  );
  if (!newest || (live && live.created_at > newest.created_at)) return;
  if (!(newest.activation_error?.missing_secrets || []).every((n) => present.has(n))) return;
  const button = el(
    'button',
    {
      type: 'button',
      onclick: async () => {
        button.disabled = true;
        const r = await api(
          'POST',
          '/v0/apps/' + id + '/releases/' + newest.release_id + '/republish',
        );
        if (!r.ok) return say(failure(r), true);
        $('waiting').hidden = true;
        say(
          r.data.activation.status === 'live'
            ? r.data.release_id + ' is live (published again from ' + newest.release_id + ').'
            : r.data.release_id +
                ' was stored: ' +
                r.data.activation.status.replace('_', ' ') +
                '.',
        );
      },
    },
    'Publish it now',
  );
  $('waiting').hidden = false;
  $('waiting').replaceChildren(
    el(
      'p',
      {},
      el('code', {}, newest.release_id),
      ' was waiting for its secrets; they are all set now.',
    ),
    button,
  );
}
const preset = new URLSearchParams(location.search).get('set');
if (preset) {
  $('name').value = preset;
  $('value').focus();
}
const me = await boot(true);
if (me) {
  const heading = await appHeading(id, 'secrets');
  canWrite = heading.ok && may(me, heading.data.account_id, 'secrets.write');
  canPublish = heading.ok && may(me, heading.data.account_id, 'apps.publish');
  $('set-card').hidden = !canWrite;
  await load();
}

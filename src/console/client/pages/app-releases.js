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
const BADGE = {
  live: 'live',
  inactive: 'muted',
  pending_secrets: 'warn',
  requires_migration: 'warn',
  failed: 'bad',
  preview: 'info',
};
/** A preview that could go live and is not live yet. */
const previewing = (r) => r.preview && !r.is_live && r.activation_status === 'inactive';
const status = (r) => (previewing(r) ? 'preview' : r.activation_status);
function explain(r) {
  const e = r.activation_error;
  if (previewing(r))
    return el(
      'span',
      {},
      'A preview at ',
      el('code', { class: 'wrap' }, new URL(r.preview_origin).host),
      ': members and link holders only. The live release is unchanged until you make this one live.',
    );
  if (!e)
    return r.is_live
      ? 'Serving now.'
      : r.activation_status === 'inactive'
        ? unpublished
          ? 'Was live. Publish again to bring the app back.'
          : 'Was live; a rollback makes it live again.'
        : '';
  if (e.code === 'pending_secrets') {
    const missing = (e.missing_secrets || []).filter((n) => !present.has(n));
    if (!missing.length)
      return el(
        'span',
        {},
        older(r)
          ? 'Its secrets are all set now, but it is older than the live release: publishing it again puts older code live.'
          : 'Its secrets are all set now: publish it again to make it live.',
      );
    return el(
      'span',
      {},
      'Waiting for secrets: ',
      missing.map((n, i) => [
        i ? ', ' : '',
        el('a', { href: '/apps/' + id + '/secrets?set=' + encodeURIComponent(n) }, 'set ' + n),
      ]),
      '. Then publish again.',
    );
  }
  if (e.code === 'requires_migration') {
    const reasons = e.reasons || [];
    // rows sharing a value for a unique index it declares: fixing a row is the way, not a new name
    if (reasons.every((x) => / has rows that share values for unique index /.test(x)))
      return el(
        'span',
        {},
        'Its unique indexes do not fit the stored rows: ' + reasons.join('; ') + '. ',
        el('a', { href: '/apps/' + id + '/data' }, 'Change or delete one of each pair'),
        ', then publish it again.',
      );
    return el(
      'span',
      {},
      'Changes resources incompatibly: ' +
        reasons.join('; ') +
        '. Add a new collection, field, store or job name instead, backfill it, then stop using the old one.',
    );
  }
  return el(
    'span',
    {},
    'Not live: ' +
      (e.reasons || []).join('; ') +
      '. Fix it and publish again; the live release kept serving.',
  );
}
let present = new Set();
let unpublished = false;
let liveCreatedAt = '';
/** Published before the live release: its code is older than what serves now. */
const older = (r) => Boolean(liveCreatedAt) && r.created_at < liveCreatedAt;
/** A pending_secrets release whose missing secrets are all set now. */
const ready = (r) =>
  r.activation_status === 'pending_secrets' &&
  (r.activation_error?.missing_secrets || []).every((n) => present.has(n));
async function load() {
  const [app, rels, secrets] = await Promise.all([
    appHeading(id),
    api('GET', '/v0/apps/' + id + '/releases'),
    api('GET', '/v0/apps/' + id + '/secrets'),
  ]);
  present = new Set(
    secrets.ok ? secrets.data.secrets.filter((x) => x.present).map((x) => x.name) : [],
  );
  if (!app.ok) return show('content', el('p', { class: 'error' }, failure(app)));
  dangerZone(app.data);
  if (!rels.ok) return show('content', el('p', { class: 'error' }, failure(rels)));
  if (!rels.data.releases.length)
    return show('content', el('p', { class: 'empty' }, 'No releases yet.'));
  liveCreatedAt = rels.data.releases.find((r) => r.is_live)?.created_at || '';
  const previews = rels.data.releases.some(previewing);
  const canPublish = may(me, app.data.account_id, 'apps.publish');
  // an unpublished app is brought back by publishing: rollback and make-live answer 409 until then
  unpublished = Boolean(app.data.deleted_at);
  const canRollback = !unpublished && may(me, app.data.account_id, 'apps.rollback');
  const canMakeLive = !unpublished && canPublish;
  show(
    'content',
    previews && canPublish
      ? el(
          'p',
          { class: 'muted', id: 'preview-links' },
          'Preview links open a preview for seven days, for whoever holds one. ',
          el(
            'button',
            { type: 'button', class: 'small secondary', onclick: revokeLinks },
            'End preview links',
          ),
        )
      : '',
    table(rels.data.releases, [
      [
        '',
        (r) =>
          r.is_live
            ? el('span', { class: 'live-dot', title: 'live', 'aria-label': 'live' }, '●')
            : '',
      ],
      [
        'Release',
        (r) =>
          el(
            'span',
            {},
            el('code', { class: 'nowrap' }, r.release_id),
            r.message ? el('span', { class: 'sub' }, r.message) : '',
          ),
      ],
      [
        'Status',
        (r) =>
          el(
            'span',
            { class: 'badge ' + (BADGE[status(r)] || 'muted') },
            status(r).replace('_', ' '),
          ),
      ],
      ['What it means', explain],
      [
        'Published',
        (r) =>
          el(
            'span',
            {},
            ago(r.created_at),
            el(
              'span',
              { class: 'sub' },
              r.created_by.email
                ? 'by ' + r.created_by.email
                : r.created_by.key_prefix
                  ? 'by key ' + r.created_by.key_prefix + '…'
                  : 'from the console',
            ),
          ),
      ],
      [
        '',
        (r) =>
          previewing(r)
            ? el(
                'span',
                { class: 'actions' },
                el(
                  'button',
                  {
                    type: 'button',
                    class: 'small secondary',
                    onclick: () => openPreview(r.release_id),
                  },
                  'Open preview',
                ),
                canMakeLive
                  ? el(
                      'button',
                      { type: 'button', class: 'small', onclick: () => makeLive(r.release_id) },
                      'Make live',
                    )
                  : '',
              )
            : !r.is_live && r.activation_status === 'inactive' && canRollback
              ? el(
                  'button',
                  { type: 'button', class: 'small', onclick: () => rollback(r.release_id) },
                  'Roll back',
                )
              : ready(r) && canPublish
                ? el(
                    'button',
                    {
                      type: 'button',
                      class: older(r) ? 'small secondary' : 'small',
                      onclick: () => again(r.release_id, older(r)),
                    },
                    older(r) ? 'Publish older code again' : 'Publish again',
                  )
                : '',
      ],
    ]),
    canPublish ? '' : onlyFor('apps.publish', 'publish, roll back and end preview links'),
  );
}
/** Unpublish (a published app), or erase its data (an unpublished one): owners and admins. */
function dangerZone(app) {
  const card = $('danger');
  card.hidden = !may(me, app.account_id, 'apps.unpublish');
  if (card.hidden) return;
  if (!app.deleted_at)
    return card.replaceChildren(
      el('h2', {}, 'Unpublish'),
      el(
        'p',
        { class: 'muted' },
        'Takes the app offline: its origin, slugs and domains stop serving. Data, releases and secrets are kept; publishing again brings it back.',
      ),
      el('button', { type: 'button', class: 'danger', onclick: unpublishApp }, 'Unpublish'),
    );
  const input = el('input', {
    id: 'erase-confirm',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: app.app_id,
  });
  card.replaceChildren(
    el('h2', {}, "Erase this app's data"),
    el(
      'p',
      { class: 'muted' },
      'Deletes its data rows, files, KV keys, R2 objects, queued messages, app users and secrets for good; their storage stops counting at once. Releases and events are kept, and publishing again brings the app back empty. This cannot be undone.',
    ),
    el(
      'form',
      { class: 'row', onsubmit: (e) => (e.preventDefault(), eraseData(input.value.trim())) },
      el(
        'div',
        {},
        el('label', { for: 'erase-confirm' }, 'Type the app id, ', el('code', {}, app.app_id)),
        input,
      ),
      el('button', { type: 'submit', class: 'danger' }, 'Erase data'),
    ),
  );
}
async function unpublishApp() {
  if (!confirm('Unpublish ' + id + '? Its origin stops serving; data is kept.')) return;
  const r = await api('DELETE', '/v0/apps/' + id);
  if (!r.ok) return say(failure(r), true);
  say('Unpublished. Publish again to bring it back.');
  await load();
}
async function eraseData(confirmation) {
  const r = await api('POST', '/v0/apps/' + id + '/erase', { confirm: confirmation });
  if (!r.ok) return say(failure(r), true);
  const e = r.data.erased;
  say(
    'Erased ' +
      e.rows +
      ' rows, ' +
      e.files +
      ' files, ' +
      e.kv_keys +
      ' KV keys, ' +
      e.r2_objects +
      ' R2 objects, ' +
      e.app_users +
      ' app users and ' +
      e.secrets +
      ' secrets.',
  );
  await load();
}
async function again(release, isOlder) {
  if (
    isOlder &&
    !confirm(
      release +
        ' was published before the live release. Publishing it again makes a copy of its older code the live release. Data, secrets and users are kept.',
    )
  )
    return;
  const r = await api(
    'POST',
    '/v0/apps/' + id + '/releases/' + release + '/republish',
    isOlder ? { confirm_older: true } : undefined,
  );
  if (!r.ok) return say(failure(r), true);
  await load();
  say(
    r.data.activation.status === 'live'
      ? r.data.release_id + ' is live (published again from ' + release + ').'
      : r.data.release_id + ' was stored: ' + r.data.activation.status.replace('_', ' ') + '.',
  );
}
async function openPreview(release) {
  // the tab opens now (a click's window); the link, made for this member, follows
  const tab = window.open('', '_blank');
  const r = await api('POST', '/v0/apps/' + id + '/releases/' + release + '/preview-link');
  if (!r.ok) {
    tab?.close();
    return say(failure(r), true);
  }
  if (tab) {
    tab.opener = null;
    tab.location.href = r.data.url;
  } else location.href = r.data.url;
}
async function revokeLinks() {
  if (
    !confirm(
      'End every preview link made until now? Whoever holds one, members included, loses access to the previews; Open preview makes a new link.',
    )
  )
    return;
  const r = await api('POST', '/v0/apps/' + id + '/preview-links/revoke');
  if (!r.ok) return say(failure(r), true);
  say('Every preview link made until now is closed. Open preview makes a new one.');
}
async function makeLive(release) {
  if (
    !confirm('Make the preview ' + release + ' the live release? Data, secrets and users are kept.')
  )
    return;
  const r = await api('POST', '/v0/apps/' + id + '/releases/' + release + '/make-live');
  if (!r.ok) return say(failure(r), true);
  say(r.data.release_id + ' is live.');
  await load();
}
async function rollback(release) {
  if (!confirm('Make ' + release + ' the live release? Data, secrets and users are kept.')) return;
  const r = await api('POST', '/v0/apps/' + id + '/rollback', { release_id: release });
  if (!r.ok) return say(failure(r), true);
  say('Rolled back: ' + r.data.release_id + ' is live.');
  await load();
}
const me = await boot(true);
if (me) await load();

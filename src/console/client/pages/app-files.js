// @ts-check
import {
  $,
  may,
  ago,
  api,
  appHeading,
  appIdOf,
  boot,
  el,
  failure,
  say,
  show,
  showMore,
  table,
} from '../console.js';
import { formatBytes } from '../bytes.js';
const id = appIdOf();
let stores = [];
let current;
let canWrite = false;
let shown = [];
const PREVIEWABLE = /^image\/(png|jpeg|gif|webp|avif|svg\+xml)$/;

/** A URL that serves the file now: the public one, or a signed one for a private store. */
async function urlOf(f) {
  if (f.public_url) return f.public_url;
  const r = await api(
    'POST',
    '/v0/apps/' + id + '/files/' + current + '/' + f.file_id + '/signed-url',
  );
  if (!r.ok) {
    say(failure(r), true);
    return null;
  }
  return r.data.url;
}

function preview(f) {
  if (!PREVIEWABLE.test(f.content_type)) return el('span', { class: 'muted' }, '—');
  const img = el('img', { class: 'thumb', alt: f.filename, loading: 'lazy' });
  urlOf(f).then((u) => {
    if (u) img.src = u;
  });
  return img;
}

async function download(f) {
  const u = await urlOf(f);
  if (u) location.assign(u + (u.includes('?') ? '&' : '?') + 'download=1');
}

async function remove(f) {
  if (!confirm('Delete ' + f.filename + '? It stops being served at once.')) return;
  const r = await api('DELETE', '/v0/apps/' + id + '/files/' + current + '/' + f.file_id);
  if (!r.ok) return say(failure(r), true);
  await load();
  say(f.filename + ' is deleted.');
}

async function load(cursor) {
  const r = await api(
    'GET',
    '/v0/apps/' +
      id +
      '/files/' +
      current +
      (cursor ? '?cursor=' + encodeURIComponent(cursor) : ''),
  );
  const box = $('files');
  box.hidden = false;
  if (!r.ok) return show(box, el('p', { class: 'error' }, failure(r)));
  shown = cursor ? shown.concat(r.data.files) : r.data.files;
  const head = el(
    'h2',
    {},
    current + ' ',
    el(
      'span',
      { class: 'badge' + (r.data.public ? ' good' : '') },
      r.data.public ? 'public' : 'private',
    ),
  );
  if (!shown.length) return show(box, head, el('p', { class: 'empty' }, 'No files yet.'));
  const more = showMore(r.data.cursor, load);
  show(
    box,
    head,
    table(shown, [
      ['', (f) => preview(f)],
      ['Name', (f) => [f.filename, el('span', { class: 'sub' }, f.file_id)]],
      ['Type', (f) => el('code', { class: 'nowrap' }, f.content_type)],
      ['Size', (f) => formatBytes(f.size)],
      ['Uploaded by', (f) => f.owner_email ?? el('span', { class: 'muted' }, 'app code')],
      ['Uploaded', (f) => ago(f.created_at)],
      [
        '',
        (f) =>
          el(
            'span',
            { class: 'actions' },
            el(
              'button',
              { type: 'button', class: 'small', onclick: () => download(f) },
              'Download',
            ),
            canWrite
              ? el(
                  'button',
                  { type: 'button', class: 'small danger', onclick: () => remove(f) },
                  'Delete',
                )
              : '',
          ),
      ],
    ]),
    more,
  );
}

function choose(name) {
  current = name;
  for (const a of document.querySelectorAll('#stores a')) {
    if (!(a instanceof HTMLElement)) continue;
    if (a.dataset.name === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  history.replaceState(null, '', '?store=' + encodeURIComponent(name));
  return load();
}

const s = await boot(true);
if (s) {
  const heading = await appHeading(id, 'files');
  canWrite = heading.ok && may(s, heading.data.account_id, 'data.write');
  const r = heading.ok ? await api('GET', '/v0/apps/' + id + '/resources') : heading;
  if (!r.ok) show('stores', el('p', { class: 'error' }, failure(r)));
  else {
    stores = r.data.resources
      .filter((x) => x.resource_type === 'files')
      .map((x) => ({ name: x.resource_name, files: x.usage?.files ?? 0 }));
    if (!stores.length)
      show(
        'stores',
        el(
          'p',
          { class: 'empty' },
          'The live release declares no file stores: add resources.files.stores to the manifest and publish.',
        ),
      );
    else {
      show(
        'stores',
        el('h2', {}, 'Stores'),
        el(
          'nav',
          { class: 'tabs', 'aria-label': 'Stores' },
          stores.map((x) =>
            el(
              'a',
              {
                href: '?store=' + encodeURIComponent(x.name),
                'data-name': x.name,
                onclick: (e) => {
                  e.preventDefault();
                  choose(x.name);
                },
              },
              x.name + ' (' + x.files + ')',
            ),
          ),
        ),
      );
      const wanted = new URLSearchParams(location.search).get('store');
      await choose(stores.some((x) => x.name === wanted) ? wanted : stores[0].name);
    }
  }
}

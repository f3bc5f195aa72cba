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
  when,
} from '../console.js';
import { formatBytes } from '../bytes.js';
import { queuePage } from './app-storage-queues.js';
const id = appIdOf();
let canWrite = false;
/** What is being browsed: `{ kind: 'kv' | 'r2' | 'queue', name, prefix, search }`, kept in the URL. */
let view = null;

const q = encodeURIComponent;
const base = '/v0/apps/' + id;

function remember() {
  const p = new URLSearchParams();
  if (view) {
    p.set(view.kind, view.name);
    if (view.prefix) p.set('prefix', view.prefix);
    if (view.search) p.set('search', view.search);
  }
  history.replaceState(null, '', p.size ? '?' + p : location.pathname);
}

/** The KV filters: keys starting with a prefix, and keys whose name, value or metadata hold a text. */
function searchBar() {
  const input = (name, placeholder, value) =>
    el('input', { type: 'search', name, placeholder, value, 'aria-label': placeholder });
  const prefix = input('prefix', 'Keys starting with…', view.prefix);
  const search = input('search', 'Name, value or metadata contains…', view.search);
  return el(
    'form',
    {
      class: 'row',
      onsubmit: (e) => {
        e.preventDefault();
        browse({
          ...view,
          prefix: /** @type {HTMLInputElement} */ (prefix).value,
          search: /** @type {HTMLInputElement} */ (search).value,
        });
      },
    },
    prefix,
    search,
    el('button', { type: 'submit', class: 'small' }, 'Search'),
  );
}

function crumbs() {
  const parts = view.prefix.split('/').filter(Boolean);
  const links = [
    el(
      'a',
      { href: '#', onclick: (e) => (e.preventDefault(), browse({ ...view, prefix: '' })) },
      view.name,
    ),
  ];
  let at = '';
  for (const part of parts) {
    at += part + '/';
    const to = at;
    links.push(
      ' / ',
      el(
        'a',
        { href: '#', onclick: (e) => (e.preventDefault(), browse({ ...view, prefix: to })) },
        part,
      ),
    );
  }
  return el('p', { class: 'crumbs' }, links);
}

async function showValue(ns, key) {
  const r = await api('GET', base + '/kv/' + q(ns) + '/value?key=' + q(key));
  if (!r.ok) return say(failure(r), true);
  const v = r.data;
  const area = el('textarea', { rows: '6', 'aria-label': 'Value of ' + key }, v.text ?? '');
  const panel = el(
    'div',
    { class: 'panel', id: 'value' },
    el('h3', {}, key, ' ', el('span', { class: 'muted' }, formatBytes(v.size))),
    v.metadata !== null ? el('p', {}, 'Metadata ', el('code', {}, JSON.stringify(v.metadata))) : '',
    v.expiration !== null
      ? el('p', {}, 'Expires ', when(new Date(v.expiration * 1000).toISOString()))
      : '',
    v.text === null
      ? el(
          'p',
          { class: 'muted' },
          'Not text: ' + v.size + ' bytes (base64 ' + v.base64.slice(0, 60) + '…)',
        )
      : area,
    canWrite && v.text !== null
      ? el(
          'span',
          { class: 'actions' },
          el(
            'button',
            {
              type: 'button',
              class: 'small',
              onclick: async () => {
                const w = await api('PUT', base + '/kv/' + q(ns) + '/value?key=' + q(key), {
                  value: /** @type {HTMLTextAreaElement} */ (area).value,
                  ...(v.metadata !== null ? { metadata: v.metadata } : {}),
                });
                if (!w.ok) return say(failure(w), true);
                say(key + ' is saved.');
              },
            },
            'Save',
          ),
        )
      : '',
  );
  $('value')?.remove();
  $('browse').append(panel);
}

async function removeKey(ns, key) {
  if (!confirm('Delete ' + key + ' from ' + ns + '? App code stops reading it at once.')) return;
  const r = await api('DELETE', base + '/kv/' + q(ns) + '/value?key=' + q(key));
  if (!r.ok) return say(failure(r), true);
  await browse(view);
  say(key + ' is deleted.');
}

/** Where an object downloads from (the console's own origin: its session, a same-origin image). */
const objectUrl = (bucket, key) => base + '/r2/' + q(bucket) + '/object?key=' + q(key);

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-ndjson)|image\/svg)/;
const PREVIEW_BYTES = 1024 * 1024;
const previewable = (o) =>
  o.size <= PREVIEW_BYTES &&
  (TEXT_TYPES.test(o.content_type ?? '') || /^image\//.test(o.content_type ?? ''));

/** A text object's first 64 KiB as text, an image as itself (from the API's sandboxed download). */
async function preview(bucket, o) {
  const type = o.content_type ?? '';
  let body;
  // an image from its own same-origin URL (the download's CSP keeps an SVG inert); text read here
  if (/^image\//.test(type) && !/svg/.test(type))
    body = el('img', { class: 'preview', alt: o.key, src: objectUrl(bucket, o.key) });
  else {
    const res = await fetch(objectUrl(bucket, o.key), { credentials: 'same-origin' });
    if (!res.ok) return say('Could not read ' + o.key + ' (' + res.status + ').', true);
    body = el('pre', { class: 'preview' }, (await res.text()).slice(0, 64 * 1024));
  }
  $('value')?.remove();
  $('browse').append(
    el(
      'div',
      { class: 'panel', id: 'value' },
      el('h3', {}, o.key, ' ', el('span', { class: 'muted' }, type + ', ' + formatBytes(o.size))),
      body,
    ),
  );
}

async function removeObject(bucket, key) {
  if (!confirm('Delete ' + key + ' from ' + bucket + '?')) return;
  const r = await api('DELETE', base + '/r2/' + q(bucket) + '/object?key=' + q(key));
  if (!r.ok) return say(failure(r), true);
  await browse(view);
  say(key + ' is deleted.');
}

async function kvPage(shown, cursor) {
  const r = await api(
    'GET',
    base +
      '/kv/' +
      q(view.name) +
      '/keys?prefix=' +
      q(view.prefix) +
      (view.search ? '&search=' + q(view.search) : '') +
      (cursor ? '&cursor=' + q(cursor) : ''),
  );
  if (!r.ok) return show('browse', el('p', { class: 'error' }, failure(r)));
  const keys = shown.concat(r.data.keys);
  const ns = view.name;
  show(
    'browse',
    el('h2', {}, 'KV namespace ', el('code', {}, ns)),
    searchBar(),
    keys.length
      ? table(keys, [
          ['Key', (k) => el('code', {}, k.name)],
          [
            'Metadata',
            (k) =>
              k.metadata === null
                ? el('span', { class: 'muted' }, '—')
                : el('code', {}, JSON.stringify(k.metadata)),
          ],
          [
            'Expires',
            (k) =>
              k.expiration === null
                ? el('span', { class: 'muted' }, 'never')
                : when(new Date(k.expiration * 1000).toISOString()),
          ],
          [
            '',
            (k) =>
              el(
                'span',
                { class: 'actions' },
                el(
                  'button',
                  { type: 'button', class: 'small', onclick: () => showValue(ns, k.name) },
                  'View',
                ),
                canWrite
                  ? el(
                      'button',
                      {
                        type: 'button',
                        class: 'small danger',
                        onclick: () => removeKey(ns, k.name),
                      },
                      'Delete',
                    )
                  : '',
              ),
          ],
        ])
      : el(
          'p',
          { class: 'empty' },
          view.search
            ? 'No key, value or metadata holds ' + view.search + '.'
            : view.prefix
              ? 'No key starts with ' + view.prefix + '.'
              : 'No keys yet.',
        ),
    showMore(r.data.cursor, (c) => kvPage(keys, c)),
  );
}

async function r2Page() {
  const r = await api(
    'GET',
    base + '/r2/' + q(view.name) + '/objects?delimiter=%2F&prefix=' + q(view.prefix),
  );
  if (!r.ok) return show('browse', el('p', { class: 'error' }, failure(r)));
  const bucket = view.name;
  const rows = [...r.data.prefixes.map((p) => ({ folder: p })), ...r.data.objects];
  show(
    'browse',
    el('h2', {}, 'R2 bucket ', el('code', {}, bucket)),
    crumbs(),
    rows.length
      ? table(rows, [
          [
            'Name',
            (o) =>
              o.folder
                ? el(
                    'a',
                    {
                      href: '#',
                      onclick: (e) => (e.preventDefault(), browse({ ...view, prefix: o.folder })),
                    },
                    o.folder.slice(view.prefix.length),
                  )
                : el('code', {}, o.key.slice(view.prefix.length)),
          ],
          [
            'Type',
            (o) => (o.folder ? 'folder' : (o.content_type ?? el('span', { class: 'muted' }, '—'))),
          ],
          ['Size', (o) => (o.folder ? '' : formatBytes(o.size))],
          ['Uploaded', (o) => (o.folder ? '' : ago(o.uploaded))],
          [
            '',
            (o) =>
              o.folder
                ? ''
                : el(
                    'span',
                    { class: 'actions' },
                    /^image\//.test(o.content_type ?? '')
                      ? el('img', {
                          class: 'thumb',
                          alt: o.key,
                          loading: 'lazy',
                          src: objectUrl(bucket, o.key),
                        })
                      : '',
                    previewable(o)
                      ? el(
                          'button',
                          { type: 'button', class: 'small', onclick: () => preview(bucket, o) },
                          'Preview',
                        )
                      : '',
                    el(
                      'button',
                      {
                        type: 'button',
                        class: 'small',
                        onclick: () => location.assign(objectUrl(bucket, o.key)),
                      },
                      'Download',
                    ),
                    canWrite
                      ? el(
                          'button',
                          {
                            type: 'button',
                            class: 'small danger',
                            onclick: () => removeObject(bucket, o.key),
                          },
                          'Delete',
                        )
                      : '',
                  ),
          ],
        ])
      : el('p', { class: 'empty' }, 'Nothing here yet.'),
    r.data.cursor ? el('p', { class: 'muted' }, 'More objects than shown: open a folder.') : '',
  );
}

async function browse(next) {
  view = { kind: next.kind, name: next.name, prefix: next.prefix ?? '', search: next.search ?? '' };
  remember();
  $('browse').hidden = false;
  for (const a of document.querySelectorAll('#bindings a[data-name]'))
    if (a instanceof HTMLElement)
      a.dataset.name === view.kind + ':' + view.name
        ? a.setAttribute('aria-current', 'page')
        : a.removeAttribute('aria-current');
  if (view.kind === 'queue')
    return queuePage({
      base,
      queue: view.name,
      canWrite,
      refresh: async () => (await overview(), browse(view)),
    });
  return view.kind === 'kv' ? kvPage([]) : r2Page();
}

const pick = (kind, name, label) =>
  el(
    'a',
    {
      href: '?' + kind + '=' + q(name),
      'data-name': kind + ':' + name,
      onclick: (e) => {
        e.preventDefault();
        browse({ kind, name });
      },
    },
    label,
  );
const unbound = (b) => (b ? '' : el('span', { class: 'badge' }, 'not bound: data kept'));

async function overview() {
  const r = await api('GET', base + '/bindings');
  if (!r.ok) return show('bindings', el('p', { class: 'error' }, failure(r)));
  const d = r.data;
  if (!d.kv.length && !d.r2.length && !d.queues.length)
    return show(
      'bindings',
      el(
        'p',
        { class: 'empty' },
        'This app has no KV namespaces, R2 buckets or queues: bind them in wrangler.jsonc and publish.',
      ),
    );
  show(
    'bindings',
    d.kv.length ? el('h2', {}, 'KV namespaces') : '',
    d.kv.length
      ? table(d.kv, [
          ['Namespace', (k) => [pick('kv', k.namespace, k.namespace), ' ', unbound(k.bound)]],
          ['Keys', (k) => k.keys.toLocaleString()],
          ['Size', (k) => formatBytes(k.bytes)],
        ])
      : '',
    d.r2.length ? el('h2', {}, 'R2 buckets') : '',
    d.r2.length
      ? table(d.r2, [
          ['Bucket', (b) => [pick('r2', b.bucket, b.bucket), ' ', unbound(b.bound)]],
          ['Objects', (b) => b.objects.toLocaleString()],
          ['Size', (b) => formatBytes(b.bytes)],
        ])
      : '',
    d.queues.length ? el('h2', {}, 'Queues') : '',
    d.queues.length
      ? table(d.queues, [
          ['Queue', (x) => pick('queue', x.queue, x.queue)],
          ['Ready', (x) => String(x.ready)],
          ['Delayed', (x) => String(x.delayed)],
          ['In flight', (x) => String(x.in_flight)],
          [
            'Dead letters',
            (x) =>
              x.dead_lettered ? el('span', { class: 'badge warn' }, String(x.dead_lettered)) : '0',
          ],
          [
            'Consumed',
            (x) => (x.consumed ? 'yes' : el('span', { class: 'badge warn' }, 'no: messages wait')),
          ],
          ['Dead letters to', (x) => x.dead_letter_queue ?? el('span', { class: 'muted' }, '—')],
        ])
      : '',
  );
  return d;
}

const s = await boot(true);
if (s) {
  const heading = await appHeading(id, 'storage');
  canWrite = heading.ok && may(s, heading.data.account_id, 'data.write');
  const d = heading.ok
    ? await overview()
    : show('bindings', el('p', { class: 'error' }, failure(heading)));
  const wanted = new URLSearchParams(location.search);
  const kind = ['r2', 'kv', 'queue'].find((k) => wanted.has(k));
  if (d && kind)
    await browse({
      kind,
      name: wanted.get(kind),
      prefix: wanted.get('prefix') ?? '',
      search: wanted.get('search') ?? '',
    });
  else if (d?.kv.length) await browse({ kind: 'kv', name: d.kv[0].namespace });
  else if (d?.r2.length) await browse({ kind: 'r2', name: d.r2[0].bucket });
}

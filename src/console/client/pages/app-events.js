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
  show,
  table,
  when,
} from '../console.js';
const id = appIdOf();
const LEVEL = { debug: 'muted', info: 'good', warn: 'warn', error: 'bad' };
let events = [];
let cursor = null;
let timer;
const filters = () => {
  const q = new URLSearchParams();
  if ($('q').value.trim()) q.set('q', $('q').value.trim());
  if ($('type').value) q.set('type', $('type').value);
  if ($('severity').value) q.set('severity', $('severity').value);
  if ($('release').value) q.set('release_id', $('release').value);
  return q;
};
const query = (extra) => {
  const q = filters();
  for (const [k, v] of Object.entries(extra)) if (v) q.set(k, v);
  return '/v0/apps/' + id + '/events?' + q;
};
const releaseLink = (r) =>
  r
    ? el(
        'a',
        { href: '/apps/' + id + '#' + r, title: 'the release that was live' },
        el('code', { class: 'nowrap' }, r),
      )
    : el('span', { class: 'muted' }, '—');

/** An event's details as a person reads them: stacks as lines, the rest as labelled values. */
function detail(e) {
  const m = e.metadata || {};
  const stack = m.stack || m.error?.stack;
  const rest = Object.entries(m).filter(([k]) => k !== 'stack');
  show(
    'detail',
    el(
      'h2',
      {},
      el('span', { class: 'badge ' + LEVEL[e.severity] }, e.severity),
      ' ',
      el('code', {}, e.type),
    ),
    el('p', {}, e.message),
    el(
      'dl',
      { class: 'fields' },
      el('dt', {}, 'when'),
      el('dd', {}, when(e.created_at)),
      el('dt', {}, 'release'),
      el('dd', {}, releaseLink(e.release_id)),
      e.request_id ? [el('dt', {}, 'request'), el('dd', {}, el('code', {}, e.request_id))] : '',
      rest.map(([k, v]) => [
        el('dt', {}, k),
        el(
          'dd',
          {},
          typeof v === 'string'
            ? v.includes('\n')
              ? el('pre', {}, v)
              : v
            : el('pre', {}, JSON.stringify(v, null, 2)),
        ),
      ]),
    ),
    ...(stack ? [el('h3', {}, 'Stack'), el('pre', { class: 'stack' }, String(stack))] : []),
    el(
      'p',
      {},
      el(
        'button',
        {
          type: 'button',
          class: 'small',
          onclick: () => {
            $('detail').hidden = true;
          },
        },
        'Close',
      ),
    ),
  );
  $('detail').hidden = false;
  $('detail').scrollIntoView({ block: 'nearest' });
}

function render() {
  if (!events.length) return show('content', el('p', { class: 'empty' }, 'No events match.'));
  show(
    'content',
    table(events, [
      ['When', (e) => ago(e.created_at)],
      ['Level', (e) => el('span', { class: 'badge ' + LEVEL[e.severity] }, e.severity)],
      ['Type', (e) => el('code', {}, e.type)],
      [
        'Message',
        (e) =>
          el(
            'a',
            {
              href: '#' + e.app_event_id,
              onclick: (ev) => {
                ev.preventDefault();
                detail(e);
              },
            },
            e.message,
          ),
      ],
      ['Release', (e) => releaseLink(e.release_id)],
    ]),
  );
  $('more').hidden = !cursor;
}
async function first() {
  if ($('grouped').checked) return grouped();
  const r = await api('GET', query({ limit: '50' }));
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  events = r.data.events;
  cursor = r.data.cursor;
  render();
}
async function grouped() {
  const r = await api('GET', '/v0/apps/' + id + '/event-groups?' + filters());
  $('more').hidden = true;
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  if (!r.data.groups.length)
    return show('content', el('p', { class: 'empty' }, 'No events match.'));
  show(
    'content',
    table(r.data.groups, [
      ['Count', (g) => el('strong', {}, g.count.toLocaleString() + '×')],
      ['Level', (g) => el('span', { class: 'badge ' + LEVEL[g.severity] }, g.severity)],
      ['Type', (g) => el('code', {}, g.type)],
      [
        'Message',
        (g) =>
          el(
            'a',
            {
              href: '#' + g.last.app_event_id,
              onclick: (ev) => {
                ev.preventDefault();
                detail(g.last);
              },
            },
            g.message,
          ),
      ],
      ['First', (g) => ago(g.first_at)],
      ['Last', (g) => ago(g.last_at)],
    ]),
  );
}
const num = (e) => Number(e.app_event_id.replace('evt_', ''));
async function tail() {
  if ($('grouped').checked) return grouped();
  const r = await api('GET', query({ limit: '100' }));
  if (!r.ok) return;
  const newest = events.length ? num(events[0]) : 0;
  const fresh = r.data.events.filter((e) => num(e) > newest);
  if (fresh.length) {
    events = fresh.concat(events);
    render();
  }
}
$('filters').addEventListener('submit', (e) => {
  e.preventDefault();
  first();
});
$('grouped').addEventListener('change', first);
$('more').addEventListener('click', async () => {
  const r = await api('GET', query({ limit: '50', cursor }));
  if (!r.ok) return;
  events = events.concat(r.data.events);
  cursor = r.data.cursor;
  render();
});
$('live').addEventListener('change', () => {
  clearInterval(timer);
  if ($('live').checked) timer = setInterval(tail, 2000);
});
if (await boot(true)) {
  await appHeading(id, 'events');
  const [types, releases] = await Promise.all([
    api('GET', '/v0/apps/' + id + '/event-types'),
    api('GET', '/v0/apps/' + id + '/releases'),
  ]);
  if (types.ok)
    $('type').append(
      ...types.data.types.map((t) =>
        el('option', { value: t.type }, t.type + ' (' + t.count + ')'),
      ),
    );
  if (releases.ok)
    $('release').append(
      ...releases.data.releases.map((r) =>
        el('option', { value: r.release_id }, r.release_id + (r.is_live ? ' (live)' : '')),
      ),
    );
  await first();
}

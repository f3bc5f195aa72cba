// @ts-check
import { ago, api, boot, el, failure, show, table } from '../console.js';
const s = await boot(true);
if (s) {
  const r = await api('GET', '/v0/apps');
  if (!r.ok) show('content', el('p', { class: 'error' }, failure(r)));
  else if (!r.data.apps.length) {
    show(
      'content',
      el('h2', {}, 'No apps yet'),
      el('p', {}, 'Publish your first app from a terminal with the platform CLI:'),
      el('pre', {}, 'platform login\nplatform init my-site\nplatform publish my-site'),
      el(
        'p',
        { class: 'muted' },
        'From a checkout of the platform, run the CLI as npm run --silent cli -- login, and so on. The app appears here once it is published.',
      ),
      s.operator
        ? el(
            'p',
            { id: 'operator-note' },
            "You are one of this server's operators: the ",
            el('a', { href: '/operator' }, 'Operator'),
            " page lists every account, sets plans, suspends and takes down, and shows the server's health.",
          )
        : '',
    );
  } else {
    const find = el('input', {
      id: 'find',
      type: 'search',
      placeholder: 'Find an app by name or id (press /)',
      'aria-label': 'Find an app',
    });
    const render = () => {
      const q = find.value.trim().toLowerCase();
      const apps = r.data.apps.filter(
        (a) => !q || a.name.toLowerCase().includes(q) || a.app_id.includes(q),
      );
      list.replaceChildren(
        apps.length
          ? appTable(apps)
          : el('p', { class: 'empty' }, 'No app matches "' + find.value + '".'),
      );
    };
    const list = el('div', {});
    find.addEventListener('input', render);
    addEventListener('keydown', (e) => {
      if (
        e.key === '/' &&
        !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName ?? '')
      ) {
        e.preventDefault();
        find.focus();
      }
    });
    show('content', el('div', { class: 'row' }, el('div', {}, find)), list);
    render();
  }
}
function status(a) {
  return a.deleted_at
    ? el('span', { class: 'badge muted' }, 'unpublished')
    : a.live_release_id
      ? el('span', { class: 'badge live' }, 'live')
      : el('span', { class: 'badge warn' }, 'no live release');
}
function appTable(apps) {
  return table(apps, [
    ['Name', (a) => el('a', { href: '/apps/' + a.app_id }, a.name)],
    [
      'Origin',
      (a) => el('a', { href: a.origin, rel: 'noopener' }, a.origin.replace(/^https?:\/\//, '')),
    ],
    ['Status', status],
    ['Live release', (a) => el('code', { class: 'nowrap' }, a.live_release_id || '—')],
    ['Last publish', (a) => ago(a.updated_at)],
  ]);
}

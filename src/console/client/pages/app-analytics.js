// @ts-check
import { $, ago, api, appHeading, appIdOf, boot, el, failure, show, table } from '../console.js';
// @ts-expect-error: served from the uplot package at /assets (src/console/routes.ts); its types are not checked here
import uPlot from '/assets/uplot.esm.js';
const id = appIdOf();
const fmt = (n) => n.toLocaleString();
function breakdown(title, obj, labels) {
  const total = Object.values(obj).reduce((a, b) => a + b, 0) || 1;
  return el(
    'div',
    { class: 'breakdown' },
    el('h3', {}, title),
    el(
      'ul',
      { class: 'bars' },
      Object.entries(obj).map(([k, v]) =>
        el(
          'li',
          {},
          el('span', { class: 'bar-label' }, labels?.[k] ?? k),
          el('meter', { min: 0, max: total, value: v, title: fmt(v) }),
          el('span', { class: 'bar-value' }, fmt(v)),
        ),
      ),
    ),
  );
}
function chart(daily) {
  const box = el('div', { id: 'chart', class: 'chart' });
  requestAnimationFrame(() => {
    const width = Math.max(280, box.clientWidth);
    new uPlot(
      {
        width,
        height: 220,
        series: [
          {},
          {
            label: 'Requests',
            stroke: getComputedStyle(document.body).getPropertyValue('--accent') || '#3457d5',
            fill: 'rgba(52,87,213,.12)',
            width: 2,
          },
        ],
        axes: [
          {
            space: 70,
            incrs: [86400, 7 * 86400, 30 * 86400],
            values: (_u, v) => v.map((t) => new Date(t * 1000).toISOString().slice(5, 10)),
          },
          { values: (_u, v) => v.map(fmt) },
        ],
        scales: { x: { time: true } },
      },
      [daily.map((d) => Date.parse(d.date + 'T00:00:00Z') / 1000), daily.map((d) => d.requests)],
      box,
    );
  });
  return box;
}
async function load() {
  const range = $('range').value;
  const r = await api('GET', '/v0/apps/' + id + '/analytics?range=' + range);
  if (!r.ok) {
    if (r.error.code === 'entitlement_required') {
      const plan = r.error.details?.required_plan_key;
      $('range-form').closest('section').hidden = true;
      return show(
        'content',
        el('h2', {}, 'Analytics are part of paid plans'),
        el(
          'p',
          {},
          "See each day's requests, which pages and referrers bring visitors, status codes, how the app is reached (its own origin, slugs, custom domains), app-user sign-ups, jobs and webhooks, and recent errors. Nothing identifying is stored: no IP addresses, user agents or visitor ids.",
        ),
        el(
          'p',
          {},
          plan
            ? 'Available from the ' +
                plan[0].toUpperCase() +
                plan.slice(1).replace('_', ' ') +
                ' plan. '
            : '',
          el('a', { href: '/billing' }, 'See plans and billing'),
        ),
      );
    }
    return show('content', el('p', { class: 'error' }, failure(r)));
  }
  const a = r.data;
  const clamp = $('clamp');
  clamp.hidden = a.clamped_to_days === null;
  clamp.textContent =
    a.clamped_to_days === null
      ? ''
      : 'Your plan keeps analytics for ' +
        a.clamped_to_days +
        ' days, so this shows ' +
        a.from +
        ' to ' +
        a.to +
        '. A larger plan keeps more.';
  show(
    'content',
    el(
      'p',
      { class: 'plan-line', id: 'totals' },
      fmt(a.totals.requests) + ' requests',
      el(
        'span',
        { class: 'muted' },
        ' · ' +
          fmt(a.totals.bot_requests) +
          ' from bots and scripts (not counted) · ' +
          a.from +
          ' to ' +
          a.to +
          ' (UTC)',
      ),
    ),
    chart(a.daily),
    el(
      'div',
      { class: 'grid' },
      breakdown('Status', a.status_buckets),
      breakdown('Reached through', a.routes, {
        canonical: 'its own origin',
        slug: 'slugs',
        custom_domain: 'custom domains',
      }),
      breakdown('Answered by', a.runtime_targets, {
        static: 'static files',
        server: 'server code',
        not_found: 'not found',
      }),
    ),
    el(
      'div',
      { class: 'grid' },
      el(
        'div',
        {},
        el('h3', {}, 'Top paths'),
        a.top_paths.length
          ? table(a.top_paths, [
              ['Path', (p) => el('code', {}, p.path)],
              ['Requests', (p) => fmt(p.requests)],
            ])
          : el('p', { class: 'empty' }, 'No visits yet.'),
      ),
      el(
        'div',
        {},
        el('h3', {}, 'Referrers'),
        a.referrers.length
          ? table(a.referrers, [
              ['From', (x) => x.domain],
              ['Requests', (x) => fmt(x.requests)],
            ])
          : el('p', { class: 'empty' }, 'No visits yet.'),
      ),
    ),
    el(
      'div',
      { class: 'grid' },
      breakdown('App users', a.app_users, {
        signups: 'sign-ups',
        sessions_created: 'sessions started',
      }),
      breakdown('Jobs', a.jobs),
      breakdown('Webhooks', a.webhooks, { delivery_failed: 'delivery failed' }),
    ),
    el('h3', {}, 'Recent errors'),
    a.recent_errors.length
      ? table(a.recent_errors, [
          ['When', (e) => ago(e.created_at)],
          ['Type', (e) => el('code', {}, e.type)],
          ['Message', (e) => e.message],
        ])
      : el('p', { class: 'empty' }, 'No errors in this range.'),
    a.recent_errors.length
      ? el('p', {}, el('a', { href: '/apps/' + id + '/events' }, 'The event log'))
      : '',
  );
}
$('range').addEventListener('change', load);
if (await boot(true)) {
  await appHeading(id, 'analytics');
  await load();
}

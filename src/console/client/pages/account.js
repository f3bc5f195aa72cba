// @ts-check
import { $, accountId, api, boot, el, failure, show, table, when } from '../console.js';
import { formatBytes } from '../bytes.js';
/** Plan display names from the operator's catalogue, rendered into the page. */
const NAMES = JSON.parse($('content').dataset.planNames);
const LABELS = {
  apps: 'Published apps',
  'requests.monthly': 'Requests this month',
  app_slugs: 'Slugs',
  custom_domains: 'Custom domains',
  'storage.bytes': 'App data and files',
};
const BYTES = new Set(['storage.bytes', 'storage.bytes.max']);
const fmt = (n, key) => (BYTES.has(key) ? formatBytes(Number(n)) : Number(n).toLocaleString());
const utcDay = (iso) =>
  new Date(iso).toLocaleDateString(undefined, {
    timeZone: 'UTC',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
  });
const STATE = {
  active: ['Active', 'good'],
  past_due_grace: ['Payment overdue (grace period)', 'warn'],
  restricted: ['Payment overdue', 'bad'],
};

/** One usage bar: a meter that turns to the warning colour past 80% of the limit. */
function bar(metric, used, limit) {
  const pct = limit > 0 ? Math.min(100, Math.floor((used / limit) * 100)) : 0;
  const text =
    limit > 0
      ? fmt(used, metric) + ' of ' + fmt(limit, metric) + ' (' + pct + '%)'
      : used > 0
        ? fmt(used, metric) + ' (not in this plan)'
        : 'not in this plan';
  const level =
    limit > 0 && used >= limit ? 'bad' : limit > 0 && used >= limit * 0.8 ? 'warn' : 'good';
  return el(
    'div',
    { class: 'usage ' + level },
    el(
      'div',
      { class: 'usage-head' },
      el('span', {}, LABELS[metric] || metric),
      el('span', { class: 'muted' }, text),
    ),
    el('meter', {
      min: 0,
      max: Math.max(limit, 1),
      low: Math.max(limit, 1) * 0.8,
      high: Math.max(limit, 1) * 0.999,
      optimum: 0,
      value: Math.min(used, Math.max(limit, 1)),
      'aria-label': (LABELS[metric] || metric) + ': ' + text,
    }),
  );
}

async function load() {
  const acc = accountId();
  const [s, l] = await Promise.all([
    api('GET', '/v0/accounts/' + acc + '/status'),
    api('GET', '/v0/accounts/' + acc + '/limits'),
  ]);
  if (!s.ok) return show('content', el('p', { class: 'error' }, failure(s)));
  const st = s.data;
  const [stateText, stateClass] = STATE[st.billing_access_state] || [
    st.billing_access_state,
    'muted',
  ];
  const parts = [
    el('h2', {}, 'Plan'),
    el(
      'p',
      { class: 'plan-line' },
      el('strong', { id: 'plan-name' }, NAMES[st.plan_key] || st.plan_key),
      ' ',
      el('span', { class: 'badge ' + stateClass }, stateText),
      st.suspended ? [' ', el('span', { class: 'badge bad' }, 'Suspended')] : '',
      st.grace_ends_at
        ? el('span', { class: 'sub' }, 'Grace period ends ' + when(st.grace_ends_at))
        : '',
    ),
    el(
      'p',
      { class: 'muted' },
      'Requests count from ' +
        utcDay(st.usage_period.period_start) +
        ' and start again on ' +
        utcDay(st.usage_period.period_end) +
        ' (UTC).',
    ),
    el(
      'div',
      { id: 'usage' },
      Object.keys(st.usage).map((m) => bar(m, st.usage[m], st.limits[m] ?? 0)),
    ),
  ];
  if (st.active_flags.length)
    parts.push(
      el('h2', {}, 'Flags'),
      el(
        'ul',
        { id: 'flags' },
        st.active_flags.map((f) =>
          el(
            'li',
            {},
            el('span', { class: 'badge bad' }, f.flag),
            ' ',
            f.scope === 'account'
              ? 'This account'
              : el('a', { href: '/apps/' + f.app_id + '/releases' }, 'App ' + f.app_id),
            ': ' + f.reason,
            el('span', { class: 'sub' }, 'since ' + when(f.set_at)),
          ),
        ),
      ),
    );
  if (st.warnings.length)
    parts.push(
      el('h2', {}, 'Warnings'),
      el(
        'ul',
        { id: 'warnings' },
        st.warnings.map((w) =>
          el('li', { class: w.code === 'usage_near_limit' ? '' : 'error' }, w.message),
        ),
      ),
    );
  if (st.compatibility_warnings.length)
    parts.push(
      el('h2', {}, 'Over this plan'),
      el(
        'ul',
        {},
        st.compatibility_warnings.map((v) => el('li', {}, v.message)),
      ),
    );
  show('content', ...parts);
  if (l.ok) {
    const lim = l.data;
    const rows = [];
    for (const k of Object.keys(lim.features))
      rows.push([k.replace(/_/g, ' '), lim.features[k] ? 'included' : 'not included']);
    for (const g of [
      'deployment_limits',
      'manifest_limits',
      'release_limits',
      'runtime_limits',
      'usage_limits',
    ])
      for (const k of Object.keys(lim[g])) rows.push([k, fmt(lim[g][k], k)]);
    const card = $('limits-card');
    card.hidden = false;
    card.replaceChildren(
      el('h2', {}, 'What ' + (NAMES[lim.plan_key] || lim.plan_key) + ' includes'),
      table(rows, [
        ['Feature or limit', (r) => el('code', {}, r[0])],
        ['', (r) => r[1]],
      ]),
    );
  }
}

$('preview').addEventListener('submit', async (e) => {
  e.preventDefault();
  const plan = $('plan').value;
  const r = await api(
    'GET',
    '/v0/accounts/' + accountId() + '/downgrade-preview?plan=' + encodeURIComponent(plan),
  );
  if (!r.ok) return show('preview-result', el('p', { class: 'error' }, failure(r)));
  const p = r.data;
  const parts = [
    el(
      'p',
      { class: p.compatible ? '' : 'error', id: 'preview-verdict' },
      p.compatible
        ? p.actions.length
          ? 'This account fits ' + NAMES[plan] + ' once the changes below are made.'
          : 'This account fits ' + NAMES[plan] + ' as it is.'
        : 'This account does not fit ' + NAMES[plan] + ' yet: fix what is listed first.',
    ),
  ];
  const blocking = p.violations.filter((v) => v.type !== 'route');
  if (blocking.length)
    parts.push(
      el(
        'ul',
        {},
        blocking.map((v) => el('li', {}, v.message)),
      ),
    );
  const routeMessage = (a) =>
    (p.violations.find((v) => v.route_id === a.route_id) || { message: a.reason }).message;
  if (p.actions.length)
    parts.push(
      el('p', {}, 'These routes would be disabled (not deleted):'),
      el(
        'ul',
        {},
        p.actions.map((a) =>
          el('li', {}, routeMessage(a), el('span', { class: 'sub' }, a.route_id)),
        ),
      ),
    );
  show('preview-result', ...parts);
});

const me = await boot(true);
if (me) await load();

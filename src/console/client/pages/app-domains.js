// @ts-check
import {
  $,
  api,
  appHeading,
  appIdOf,
  boot,
  copyButton,
  el,
  failure,
  may,
  onlyFor,
  say,
  show,
  when,
} from '../console.js';
const id = appIdOf();
let canWrite = false;
const STATUS = {
  active: ['good', 'active'],
  pending_dns: ['warn', 'waiting for DNS'],
  disabled: ['', 'disabled'],
  disabled_downgrade: ['bad', 'disabled by a plan change'],
  disabled_billing: ['bad', 'disabled: payment overdue'],
};
const badge = (s) => el('span', { class: 'badge ' + (STATUS[s]?.[0] ?? '') }, STATUS[s]?.[1] ?? s);
function records(route) {
  const rows = route.dns_instructions.records.map((r) =>
    el(
      'tr',
      {},
      el('td', {}, el('code', {}, r.type)),
      el('td', {}, el('code', {}, r.name), ' ', copyButton(r.name)),
      el('td', {}, el('code', {}, r.value), ' ', copyButton(r.value)),
      el(
        'td',
        {},
        (r.required ? '' : 'Optional: ') +
          {
            traffic: 'sends visitors here',
            verification: 'proves you own the domain',
            www: 'the www name',
            certificate: 'lets the certificate be issued',
          }[r.purpose] +
          '.' +
          (r.note ? ' ' + r.note : ''),
      ),
    ),
  );
  return el(
    'table',
    { class: 'records' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ['Type', 'Name', 'Value', 'Why'].map((h) => el('th', { scope: 'col' }, h)),
      ),
    ),
    el('tbody', {}, rows),
  );
}
function diagnosis(route) {
  const checks = route.verification?.checks ?? [];
  if (!checks.length)
    return el(
      'p',
      { class: 'muted' },
      'Not checked yet. Create the records above, then press Verify.',
    );
  return el(
    'ul',
    { class: 'checks' },
    checks.map((c) =>
      el(
        'li',
        { class: c.ok ? 'good' : c.blocking ? 'bad' : 'warn' },
        (c.ok ? '✓ ' : '✗ ') + c.message,
      ),
    ),
  );
}
function actions(route) {
  const out = [];
  if (route.route_type === 'custom_domain' && route.status === 'pending_dns')
    out.push(
      el('button', { type: 'button', class: 'small', onclick: () => verify(route) }, 'Verify'),
    );
  if (route.status === 'active' || route.status === 'pending_dns')
    out.push(
      el(
        'button',
        { type: 'button', class: 'small', onclick: () => patch(route, 'disabled') },
        'Disable',
      ),
    );
  else
    out.push(
      el(
        'button',
        { type: 'button', class: 'small', onclick: () => patch(route, 'active') },
        'Enable',
      ),
    );
  out.push(
    el('button', { type: 'button', class: 'small danger', onclick: () => remove(route) }, 'Remove'),
  );
  return el('div', { class: 'actions' }, out);
}
function card(route) {
  const head = el(
    'h3',
    {},
    route.status === 'active'
      ? el('a', { href: route.url, rel: 'noopener' }, route.hostname)
      : route.hostname,
    ' ',
    badge(route.status),
  );
  const parts = [
    head,
    el(
      'p',
      { class: 'muted' },
      (route.route_type === 'slug' ? 'Slug' : 'Custom domain') +
        ' · added ' +
        when(route.created_at) +
        (route.disabled_reason ? ' · ' + route.disabled_reason : ''),
    ),
  ];
  if (route.route_type === 'custom_domain' && route.status !== 'active') {
    parts.push(el('h4', {}, 'DNS records to create'), records(route));
    if (route.dns_instructions.traffic_note)
      parts.push(el('p', { class: 'hint' }, route.dns_instructions.traffic_note));
    parts.push(
      el(
        'h4',
        {},
        'Last check' +
          (route.verification.last_checked_at
            ? ' (' + when(route.verification.last_checked_at) + ')'
            : ''),
      ),
      diagnosis(route),
    );
    if (route.verification.next_check_at)
      parts.push(
        el(
          'p',
          { class: 'hint' },
          'Checked again automatically at ' + when(route.verification.next_check_at) + '.',
        ),
      );
  }
  if (canWrite) parts.push(actions(route));
  return el('article', { class: 'route', 'data-hostname': route.hostname }, parts);
}
async function load() {
  const r = await api('GET', '/v0/apps/' + id + '/routes');
  if (!r.ok) return show('content', el('p', { class: 'error' }, failure(r)));
  const note = canWrite ? '' : onlyFor('routes.write', 'add, verify and remove slugs and domains');
  if (!r.data.routes.length)
    return show(
      'content',
      el(
        'p',
        { class: 'empty' },
        'No slugs or custom domains yet. The app is served at its own origin above.',
      ),
      note,
    );
  show('content', ...r.data.routes.map(card), note);
}
async function verify(route) {
  const r = await api(
    'POST',
    '/v0/apps/' + id + '/domains/' + encodeURIComponent(route.hostname) + '/verify',
    {},
  );
  if (r.ok) say(route.hostname + ' is verified and serves the app.');
  else say(r.error.code === 'domain_pending_verification' ? r.error.message : failure(r), true);
  await load();
}
async function patch(route, status) {
  const r = await api('PATCH', '/v0/apps/' + id + '/routes/' + route.route_id, { status });
  if (!r.ok) return say(failure(r), true);
  say(
    route.hostname +
      (status === 'disabled'
        ? ' is disabled; the app still serves at its own origin.'
        : r.data.status === 'active'
          ? ' serves the app again.'
          : ' is enabled and waits for DNS verification.'),
  );
  await load();
}
async function remove(route) {
  if (!confirm('Remove ' + route.hostname + '? It stops serving the app at once.')) return;
  const path =
    route.route_type === 'slug'
      ? '/slugs/' + encodeURIComponent(route.slug)
      : '/domains/' + encodeURIComponent(route.hostname);
  const r = await api('DELETE', '/v0/apps/' + id + path);
  if (!r.ok) return say(failure(r), true);
  say('Removed ' + route.hostname + '.');
  await load();
}
$('add-slug').addEventListener('submit', async (e) => {
  e.preventDefault();
  const r = await api('POST', '/v0/apps/' + id + '/slugs', { slug: $('slug').value.trim() });
  if (!r.ok) return say(failure(r), true);
  $('slug').value = '';
  say('The app now also serves at ' + r.data.url);
  await load();
});
$('add-domain').addEventListener('submit', async (e) => {
  e.preventDefault();
  const r = await api('POST', '/v0/apps/' + id + '/domains', {
    hostname: $('hostname').value.trim(),
  });
  if (!r.ok) return say(failure(r), true);
  $('hostname').value = '';
  say('Added ' + r.data.hostname + '. Create the DNS records below, then press Verify.');
  await load();
});
const me = await boot(true);
if (me) {
  const a = await appHeading(id, 'domains');
  if (a?.ok)
    $('apps-host').textContent = new URL(a.data.origin).hostname.split('.').slice(1).join('.');
  canWrite = a.ok && may(me, a.data.account_id, 'routes.write');
  $('slug-card').hidden = !canWrite;
  $('domain-card').hidden = !canWrite;
  await load();
}

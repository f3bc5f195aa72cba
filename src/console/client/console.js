// @ts-check
import { sameOriginPath } from './same-origin-path.js';
/**
 * The element with this id. Typed as a form field, since most lookups read `.value` or `.checked`;
 * a page that knows better says so with a cast.
 * @param {string} id
 * @returns {HTMLInputElement}
 */
export const $ = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
export function say(text, bad = false) {
  const m = $('msg');
  if (!m) return;
  m.textContent = text;
  m.className = bad ? 'error' : '';
}

/** el('a', { href }, 'text', child…): a DOM node; strings become text, never markup. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (k === 'class') node.className = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity))
    if (c !== undefined && c !== null && c !== false)
      node.append(c instanceof Node ? c : String(c));
  return node;
}
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
/** A time as people scan it in a table: relative ("3 hours ago", "in 6 days"), the exact one on hover. */
export function ago(iso) {
  if (!iso) return '—';
  const t = new Date(iso);
  const s = (t.getTime() - Date.now()) / 1000;
  const a = Math.abs(s);
  /** @type {[number, Intl.RelativeTimeFormatUnit]} */
  const [n, unit] =
    a < 45
      ? [0, 'second']
      : a < 2700
        ? [s / 60, 'minute']
        : a < 79200
          ? [s / 3600, 'hour']
          : a < 2592000
            ? [s / 86400, 'day']
            : a < 31536000
              ? [s / 2592000, 'month']
              : [s / 31536000, 'year'];
  const text =
    unit === 'second'
      ? s <= 0
        ? 'just now'
        : 'in a moment'
      : RELATIVE.format(Math.round(n), unit);
  return el('time', { datetime: t.toISOString(), title: t.toLocaleString() }, text);
}
export const accountId = () => localStorage.getItem('platform.account') || '';

let current;
/** The console session, or null when signed out. */
export async function session() {
  if (current !== undefined) return current;
  const r = await fetch('/v0/platform/session', { credentials: 'same-origin' });
  current = r.ok ? await r.json() : null;
  return current;
}

/** Calls /v0 with the session: CSRF on mutations, the chosen account, errors as { ok: false, error }. */
export async function api(method, path, body) {
  const s = await session();
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (s && method !== 'GET') headers['x-platform-csrf'] = s.csrf_token;
  if (accountId()) headers['x-platform-account-id'] = accountId();
  const r = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await r.json().catch(() => ({}));
  if (r.status === 401 && s !== null) {
    location.assign('/sign-in?next=' + encodeURIComponent(location.pathname + location.search));
  }
  return r.ok
    ? { ok: true, status: r.status, data }
    : {
        ok: false,
        status: r.status,
        data,
        error: data.error || { code: 'http_' + r.status, message: 'HTTP ' + r.status },
      };
}
/** An API error as a person reads it: the message, then the code. */
export const failure = (r) => r.error.message + ' (' + r.error.code + ')';

/** Puts the page's content in place of its loading state. */
export function show(target, ...nodes) {
  const t = typeof target === 'string' ? $(target) : target;
  t.replaceChildren(...nodes);
  t.removeAttribute('aria-busy');
  t.classList.remove('loading');
}

/**
 * A list's "Show more" button for the next page, or nothing on the last page.
 * @param {string | null | undefined} cursor the page's `cursor`
 * @param {(cursor: string) => unknown} load loads the page after it
 */
export const showMore = (cursor, load) =>
  cursor
    ? el(
        'p',
        {},
        el('button', { type: 'button', class: 'small', onclick: () => load(cursor) }, 'Show more'),
      )
    : '';

/** A table of rows; each column is [heading, row => cell]. */
export function table(rows, columns) {
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      {},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          columns.map(([h]) => el('th', { scope: 'col' }, h)),
        ),
      ),
      el(
        'tbody',
        {},
        rows.map((row) =>
          el(
            'tr',
            {},
            columns.map(([h, cell]) =>
              el('td', { 'data-label': h }, el('span', { class: 'cell' }, cell(row))),
            ),
          ),
        ),
      ),
    ),
  );
}

export function copyButton(text, label = 'Copy') {
  const b = el('button', { type: 'button', class: 'small' }, label);
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      b.textContent = 'Copied';
    } catch {
      b.textContent = 'Select and copy';
    }
  });
  return b;
}

/** @type {Record<string, string[]> | undefined} */
let matrix;
/** Roles allowed `permission`, from the server's matrix sent with the page. */
const rolesFor = (permission) =>
  (matrix ??= JSON.parse(document.getElementById('permissions')?.textContent || '{}'))[
    permission
  ] ?? [];

/**
 * Whether the signed-in member may do `permission` in the account `account` (the app's owner):
 * pages offer only that, and the API still decides.
 */
export function may(s, account, permission) {
  const role = s?.accounts.find((a) => a.account_id === account)?.role;
  return Boolean(role) && rolesFor(permission).includes(role);
}

/** The line a page shows instead of what a member's role may not do: "owners, admins and developers <what>". */
export function onlyFor(permission, what) {
  const roles = rolesFor(permission).map((r) => r + 's');
  const who = roles.length > 1 ? roles.slice(0, -1).join(', ') + ' and ' + roles.at(-1) : roles[0];
  const text = who ? who.charAt(0).toUpperCase() + who.slice(1) + ' ' + what + '.' : '';
  return el('p', { class: 'muted read-only' }, 'Your role reads this page. ' + text);
}

/** The header: who is signed in, the account switcher, sign-out. A signed-in page sends signed-out visitors to sign in. */
export async function boot(signedIn) {
  const s = await session();
  if (!signedIn) return s;
  if (!s) {
    location.assign('/sign-in?next=' + encodeURIComponent(location.pathname + location.search));
    return null;
  }
  $('who').textContent = s.user.email;
  $('who').title = s.user.email;
  if (s.operator)
    for (const a of document.querySelectorAll('[data-operator]'))
      if (a instanceof HTMLElement) a.hidden = false;
  const chosen =
    accountId() && s.accounts.some((a) => a.account_id === accountId())
      ? accountId()
      : s.default_account_id;
  if (chosen) localStorage.setItem('platform.account', chosen);
  const sw = $('account-switch');
  sw.hidden = false;
  sw.replaceChildren(
    ...s.accounts.map((a) =>
      el(
        'option',
        { value: a.account_id, selected: a.account_id === chosen },
        a.name + ' · ' + a.role,
      ),
    ),
  );
  sw.addEventListener('change', () => {
    localStorage.setItem('platform.account', sw.value);
    location.assign('/');
  });
  const out = $('sign-out');
  out.hidden = false;
  out.addEventListener('click', async () => {
    await api('DELETE', '/v0/platform/session');
    location.assign('/sign-in');
  });
  return s;
}

/** An app page's heading: the app's name with the page's, and its origin as a link. */
export async function appHeading(id, what) {
  const r = await api('GET', '/v0/apps/' + id);
  if (!r.ok) return r;
  document.querySelector('h1').textContent = what ? r.data.name + ': ' + what : r.data.name;
  document.title = r.data.name + ' · Platform';
  $('app-origin').replaceChildren(
    el('a', { href: r.data.origin, rel: 'noopener' }, r.data.origin),
    r.data.deleted_at ? ' · unpublished ' + when(r.data.deleted_at) : '',
  );
  // the header names the account the app belongs to, and the account pages follow it from here
  const sw = document.getElementById('account-switch');
  if (
    sw instanceof HTMLSelectElement &&
    [...sw.options].some((o) => o.value === r.data.account_id)
  ) {
    sw.value = r.data.account_id;
    localStorage.setItem('platform.account', r.data.account_id);
  }
  return r;
}

/**
 * Where to go after signing in: the stored `next`, only if it stays on this console's own origin,
 * decided by the server's own function (src/lib/same-origin-path.ts).
 */
export const next = () => {
  const n = localStorage.getItem('platform.next');
  localStorage.removeItem('platform.next');
  return sameOriginPath(n);
};
/** The app id in /apps/<app_id>/… */
export const appIdOf = () => location.pathname.split('/')[2];

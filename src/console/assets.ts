/**
 * The console's stylesheet and its shared client library (`/assets/console.js`, an ES module each
 * page's own script imports). Everything goes through the public `/v0` API; the DOM is built with
 * `textContent`, never `innerHTML`, so nothing an API returns can become markup.
 */
export const CONSOLE_CSS = `:root{color-scheme:light dark;--fg:#1d2430;--muted:#5b6473;--bg:#f7f8fa;--card:#fff;--line:#d9dde3;--accent:#3457d5;--bad:#b42318;--good:#067647;--warn:#b54708;--code:#eef1f5}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--muted:#a3abb8;--bg:#12151b;--card:#1a1e26;--line:#2c323d;--accent:#7d98ff;--bad:#ff8a80;--good:#6ce9a6;--warn:#fdb022;--code:#232935}}
[hidden]{display:none!important}*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}header{display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;align-items:center;padding:.6rem 1.25rem;border-bottom:1px solid var(--line);background:var(--card)}
.brand{font-weight:700;color:var(--fg);text-decoration:none;margin-right:.5rem}nav{display:flex;gap:1rem;flex-wrap:wrap}nav a{text-decoration:none;color:var(--muted);font-weight:600}nav a[aria-current=page]{color:var(--fg)}
.spacer{flex:1}.docs-link{color:var(--muted);font-weight:600;text-decoration:none}#who{color:var(--muted);font-size:.9rem}#account-switch{width:auto;padding:.3rem .5rem}
main{max-width:60rem;margin:2rem auto;padding:0 1rem}main.narrow{max-width:30rem}.card{padding:1.5rem;background:var(--card);border:1px solid var(--line);border-radius:12px;margin-bottom:1.25rem}
h1{margin:0 0 1rem;font-size:1.5rem}h2{font-size:1.1rem;margin:0 0 .75rem}label{display:block;font-weight:600;margin:1rem 0 .25rem}
input,select,textarea{width:100%;padding:.55rem .7rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:8px}
input:focus,select:focus,button:focus,a:focus{outline:3px solid var(--accent);outline-offset:1px}
small,.hint,.optional,.muted{color:var(--muted);font-weight:400}button{margin-top:1rem;padding:.5rem 1rem;font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:8px;cursor:pointer}
button.secondary,button.small{color:var(--fg);background:transparent;border:1px solid var(--line)}button.small{margin:0;padding:.2rem .6rem;font-size:.875rem}button.danger{color:var(--bad);border-color:var(--bad)}
.actions{display:flex;gap:.5rem .75rem;flex-wrap:wrap}td .actions button{white-space:nowrap}time{white-space:nowrap}.row{display:flex;gap:.75rem;flex-wrap:wrap;align-items:end}.row>*{flex:1 1 10rem}.row>button{flex:0 0 auto}
#msg{min-height:1.5em}#msg.error,.error{color:var(--bad)}code,pre{font:.9em ui-monospace,SFMono-Regular,Menlo,monospace;background:var(--code);border-radius:4px;padding:.1em .3em}pre{padding:.75rem;overflow:auto}
.table-wrap{overflow-x:auto}table{width:100%;border-collapse:collapse;font-size:.95rem}th,td{text-align:left;padding:.5rem .6rem;border-bottom:1px solid var(--line);vertical-align:top}th{color:var(--muted);font-weight:600;font-size:.85rem}
.badge{display:inline-block;padding:.05rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;border:1px solid currentColor}.badge.live,.badge.good{color:var(--good)}.badge.warn{color:var(--warn)}.badge.bad{color:var(--bad)}.badge.muted{color:var(--muted)}.badge.info{color:var(--accent)}code.wrap{overflow-wrap:anywhere}
.tabs{display:flex;gap:.25rem;flex-wrap:wrap;border-bottom:1px solid var(--line);margin-bottom:1.25rem}.tabs a{padding:.5rem .9rem;text-decoration:none;color:var(--muted);font-weight:600;border-bottom:2px solid transparent}.tabs a[aria-current=page]{color:var(--fg);border-color:var(--accent)}
.check{display:flex!important;align-items:center;gap:.4rem;flex:0 0 auto!important;margin:0 0 .6rem}.check input{width:auto}td code{word-break:break-word}.loading{min-height:8rem}.live-dot{color:var(--good)}.sub{display:block;color:var(--muted);font-size:.85rem}.empty{color:var(--muted)}.secret-once{padding:.75rem;border:1px solid var(--warn);border-radius:8px;margin-top:1rem}
ul{padding-left:1.2rem}.usage{margin:.9rem 0}.usage-head{display:flex;justify-content:space-between;gap:1rem;flex-wrap:wrap;font-weight:600}.usage meter{display:block;width:100%;height:.9rem;margin-top:.3rem}.plan-line{font-size:1.15rem;margin:0 0 .25rem}.plan-line .badge{margin-left:.25rem;vertical-align:middle}
article.route h3{margin:0 0 .25rem;font-size:1.05rem}article.route h4{margin:1rem 0 .4rem;font-size:.95rem}article.route+article.route{border-top:1px solid var(--line);margin-top:1.25rem;padding-top:1.25rem}
table.records td:first-child code{white-space:nowrap}ul.checks{list-style:none;padding:0;margin:.25rem 0}ul.checks li{margin:.3rem 0}ul.checks li.good{color:var(--good)}ul.checks li.bad{color:var(--bad)}ul.checks li.warn{color:var(--warn)}article.route .actions{margin-top:.75rem}
.run-now{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}.run-now input{width:auto;flex:1 1 9rem;padding:.3rem .5rem}.run-now [role=status]{flex-basis:100%}td code.nowrap{white-space:nowrap;word-break:normal}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1.25rem;margin:1.25rem 0}.grid h3,.breakdown h3{font-size:1rem;margin:0 0 .5rem}ul.bars{list-style:none;padding:0;margin:0}ul.bars li{display:grid;grid-template-columns:8.5rem 1fr 4rem;gap:.5rem;align-items:center;margin:.25rem 0;font-size:.9rem}ul.bars meter{width:100%}.bar-value{text-align:right;font-variant-numeric:tabular-nums}.chart{width:100%;margin:1rem 0}
#app-origin{overflow-wrap:anywhere}pre.stack{white-space:pre;max-height:24rem;font-size:.85em}img.thumb{width:3rem;height:3rem;object-fit:contain;border-radius:4px;border:1px solid var(--line);display:block;background:var(--code)}dl.fields{display:grid;grid-template-columns:minmax(6rem,max-content) minmax(0,1fr);gap:.4rem 1rem;margin:0 0 1rem}dl.fields dt{font-weight:600}dl.fields dd{margin:0;overflow-wrap:anywhere}dl.fields pre{margin:0}.richtext{white-space:pre-wrap}#row-form textarea{font:.9em ui-monospace,monospace}
@media (max-width:640px){header{gap:.4rem .6rem}header nav{order:3;flex-basis:100%;flex-wrap:nowrap;overflow-x:auto;gap:.9rem;padding-bottom:.15rem}header nav a{white-space:nowrap}.tabs{flex-wrap:nowrap;overflow-x:auto}.tabs a{white-space:nowrap}#who{display:none}#account-switch{max-width:6rem;font-size:.875rem;padding:.25rem .4rem}.brand{margin-right:0}}
@media (max-width:480px){header{padding:.5rem .75rem}main{margin:1rem auto}.card{padding:1rem}th,td{padding:.4rem}}
@media (max-width:640px){.table-wrap thead{display:none}.table-wrap table,.table-wrap tbody,.table-wrap tr{display:block}.table-wrap tr{padding:.6rem 0;border-bottom:1px solid var(--line)}.table-wrap td{display:grid;grid-template-columns:6.5rem minmax(0,1fr);gap:.75rem;border:0;padding:.15rem 0}.table-wrap td::before{content:attr(data-label);color:var(--muted);font-size:.85rem;font-weight:600}.table-wrap td[data-label=""]{display:block}.table-wrap td .cell{overflow-wrap:anywhere;min-width:0}.table-wrap td[data-label=""]::before{content:none}}`;

export const CONSOLE_JS = `export const $ = (id) => document.getElementById(id);
export function say(text, bad = false) { const m = $('msg'); if (!m) return; m.textContent = text; m.className = bad ? 'error' : ''; }

/** el('a', { href }, 'text', child…): a DOM node; strings become text, never markup. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (k === 'class') node.className = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) if (c !== undefined && c !== null && c !== false) node.append(c instanceof Node ? c : String(c));
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
  const [n, unit] = a < 45 ? [0, 'second'] : a < 2700 ? [s / 60, 'minute'] : a < 79200 ? [s / 3600, 'hour'] : a < 2592000 ? [s / 86400, 'day'] : a < 31536000 ? [s / 2592000, 'month'] : [s / 31536000, 'year'];
  const text = unit === 'second' ? (s <= 0 ? 'just now' : 'in a moment') : RELATIVE.format(Math.round(n), unit);
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
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (s && method !== 'GET') headers['x-platform-csrf'] = s.csrf_token;
  if (accountId()) headers['x-platform-account-id'] = accountId();
  const r = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await r.json().catch(() => ({}));
  if (r.status === 401 && s !== null) { location.assign('/sign-in?next=' + encodeURIComponent(location.pathname + location.search)); }
  return r.ok ? { ok: true, status: r.status, data } : { ok: false, status: r.status, data, error: data.error || { code: 'http_' + r.status, message: 'HTTP ' + r.status } };
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

/** A table of rows; each column is [heading, row => cell]. */
export function table(rows, columns) {
  return el('div', { class: 'table-wrap' }, el('table', {},
    el('thead', {}, el('tr', {}, columns.map(([h]) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows.map((row) => el('tr', {}, columns.map(([h, cell]) => el('td', { 'data-label': h }, el('span', { class: 'cell' }, cell(row)))))))));
}

export function copyButton(text, label = 'Copy') {
  const b = el('button', { type: 'button', class: 'small' }, label);
  b.addEventListener('click', async () => { try { await navigator.clipboard.writeText(text); b.textContent = 'Copied'; } catch { b.textContent = 'Select and copy'; } });
  return b;
}

/** The header: who is signed in, the account switcher, sign-out. A signed-in page sends signed-out visitors to sign in. */
export async function boot(signedIn) {
  const s = await session();
  if (!signedIn) return s;
  if (!s) { location.assign('/sign-in?next=' + encodeURIComponent(location.pathname + location.search)); return null; }
  $('who').textContent = s.user.email;
  if (s.operator) for (const a of document.querySelectorAll('[data-operator]')) a.hidden = false;
  const chosen = accountId() && s.accounts.some((a) => a.account_id === accountId()) ? accountId() : s.default_account_id;
  if (chosen) localStorage.setItem('platform.account', chosen);
  const sw = $('account-switch');
  sw.hidden = false;
  sw.replaceChildren(...s.accounts.map((a) => el('option', { value: a.account_id, selected: a.account_id === chosen }, a.name + ' · ' + a.role)));
  sw.addEventListener('change', () => { localStorage.setItem('platform.account', sw.value); location.assign('/'); });
  const out = $('sign-out');
  out.hidden = false;
  out.addEventListener('click', async () => { await api('DELETE', '/v0/platform/session'); location.assign('/sign-in'); });
  return s;
}

/** An app page's heading: the app's name with the page's, and its origin as a link. */
export async function appHeading(id, what) {
  const r = await api('GET', '/v0/apps/' + id);
  if (!r.ok) return r;
  document.querySelector('h1').textContent = what ? r.data.name + ': ' + what : r.data.name;
  document.title = r.data.name + ' · Platform';
  $('app-origin').replaceChildren(el('a', { href: r.data.origin, rel: 'noopener' }, r.data.origin), r.data.deleted_at ? ' · unpublished ' + when(r.data.deleted_at) : '');
  return r;
}

/**
 * Where to go after signing in: the stored \`next\`, only if it resolves to this console's own origin.
 * Resolving as the browser will (backslashes, tabs, newlines, dot segments) is the only safe test;
 * the absolute URL is returned so that no path is read again as protocol-relative.
 */
export const next = () => {
  const n = localStorage.getItem('platform.next');
  localStorage.removeItem('platform.next');
  if (!n) return '/';
  try {
    const u = new URL(n, location.origin);
    return u.origin === location.origin ? u.href : '/';
  } catch { return '/'; }
};
/** The app id in /apps/<app_id>/… */
export const appIdOf = () => location.pathname.split('/')[2];
`;

/** The console's one script and stylesheet, served from `/assets/` so the pages need no inline code (strict CSP). */
export const CONSOLE_CSS = `:root{color-scheme:light dark;--fg:#1d2430;--muted:#5b6473;--bg:#f7f8fa;--card:#fff;--line:#d9dde3;--accent:#3457d5;--bad:#b42318}
@media (prefers-color-scheme:dark){:root{--fg:#e7eaf0;--muted:#a3abb8;--bg:#12151b;--card:#1a1e26;--line:#2c323d;--accent:#7d98ff;--bad:#ff8a80}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;justify-content:space-between;align-items:center;padding:.75rem 1.5rem;border-bottom:1px solid var(--line);background:var(--card)}
.brand{font-weight:700;color:var(--fg);text-decoration:none}#who{color:var(--muted);font-size:.9rem}
main{max-width:30rem;margin:3rem auto;padding:2rem;background:var(--card);border:1px solid var(--line);border-radius:12px}
h1{margin-top:0;font-size:1.5rem}h2{font-size:1.1rem}label{display:block;font-weight:600;margin:1rem 0 .25rem}
input,select{width:100%;padding:.6rem .7rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:8px}
input:focus,select:focus,button:focus{outline:3px solid var(--accent);outline-offset:1px}
small,.hint,.optional{color:var(--muted);font-weight:400}button{margin-top:1.25rem;padding:.6rem 1.1rem;font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:8px;cursor:pointer}
button.secondary{color:var(--fg);background:transparent;border:1px solid var(--line)}.actions{display:flex;gap:.75rem}
#msg{min-height:1.5em}#msg.error{color:var(--bad)}code{font-size:.95em}ul{padding-left:1.2rem}`;

export const CONSOLE_JS = `const $ = (id) => document.getElementById(id);
const say = (text, bad = false) => { const m = $('msg'); m.textContent = text; m.className = bad ? 'error' : ''; };
async function api(method, path, body, csrf) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (csrf) headers['x-platform-csrf'] = csrf;
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const data = await r.json().catch(() => ({}));
  return { ok: r.ok, status: r.status, data };
}
const failure = (r) => (r.data && r.data.error ? r.data.error.message : 'Something went wrong (HTTP ' + r.status + ').');
async function session() {
  const r = await api('GET', '/v0/platform/session');
  if (r.ok) $('who').textContent = r.data.user.email;
  return r.ok ? r.data : null;
}
const next = () => { const n = localStorage.getItem('platform.next'); localStorage.removeItem('platform.next'); return n && n.startsWith('/') && !n.startsWith('//') ? n : '/'; };

const pages = {
  async 'sign-in'() {
    const n = new URLSearchParams(location.search).get('next');
    if (n) localStorage.setItem('platform.next', n);
    $('sign-in').addEventListener('submit', async (e) => {
      e.preventDefault();
      say('Sending…');
      const r = await api('POST', '/v0/auth/email/request', { email: $('email').value });
      if (!r.ok) return say(failure(r), true);
      say('');
      $('sign-in').hidden = true;
      $('sent').hidden = false;
    });
  },
  async confirm() {
    const token = new URLSearchParams(location.hash.slice(1)).get('token');
    history.replaceState(null, '', location.pathname);
    if (!token) { $('confirm').disabled = true; return say('This page needs the link from your e-mail.', true); }
    $('confirm').addEventListener('click', async () => {
      $('confirm').disabled = true;
      const r = await api('POST', '/v0/auth/email/confirm', { token });
      if (!r.ok) { $('confirm').disabled = false; return say(failure(r) + ' ', true); }
      if (r.data.status === 'signup_required') { sessionStorage.setItem('platform.signup', r.data.email); location.assign('/signup'); return; }
      location.assign(next());
    });
  },
  async signup() {
    const email = sessionStorage.getItem('platform.signup');
    if (email) $('for').textContent = 'Creating an account for ' + email + '.';
    $('signup').addEventListener('submit', async (e) => {
      e.preventDefault();
      const body = { username: $('username').value.trim() };
      const name = $('account_name').value.trim();
      if (name) body.account_name = name;
      const r = await api('POST', '/v0/auth/signup/complete', body);
      if (!r.ok) return say(failure(r), true);
      sessionStorage.removeItem('platform.signup');
      location.assign(next());
    });
  },
  async device() {
    const s = await session();
    const given = new URLSearchParams(location.search).get('user_code');
    if (!s) {
      localStorage.setItem('platform.next', location.pathname + location.search);
      $('code-form').hidden = true;
      const a = document.createElement('a'); a.href = '/sign-in'; a.textContent = 'Sign in';
      const p = document.createElement('p'); p.append(a, ' to approve a device.');
      $('msg').before(p);
      return;
    }
    for (const acc of s.accounts) {
      const o = document.createElement('option'); o.value = acc.account_id; o.textContent = acc.name + ' (' + acc.role + ')';
      if (acc.account_id === s.default_account_id) o.selected = true;
      $('account').append(o);
    }
    if (given) $('user_code').value = given;
    let code = '';
    $('code-form').addEventListener('submit', async (e) => {
      e.preventDefault();
      code = $('user_code').value.trim();
      const r = await api('GET', '/v0/auth/device/approval?user_code=' + encodeURIComponent(code));
      if (!r.ok) return say(failure(r), true);
      if (r.data.status !== 'pending') return say('This code was already ' + r.data.status + '.', true);
      say('');
      $('client').textContent = r.data.client_name;
      $('shown-code').textContent = r.data.user_code;
      $('expires').textContent = new Date(r.data.expires_at).toLocaleTimeString();
      $('code-form').hidden = true;
      $('request').hidden = false;
      $('approve').focus();
    });
    const decide = async (approve) => {
      const body = approve ? { user_code: code, account_id: $('account').value } : { user_code: code };
      const r = await api('POST', '/v0/auth/device/' + (approve ? 'approve' : 'deny'), body, s.csrf_token);
      if (!r.ok) return say(failure(r), true);
      $('request').hidden = true;
      say(approve ? 'Approved. Return to your terminal; it is logged in.' : 'Denied. Nothing was shared with that device.');
    };
    $('approve').addEventListener('click', () => decide(true));
    $('deny').addEventListener('click', () => decide(false));
  },
  async home() {
    const s = await session();
    if (!s) { $('signed-out').hidden = false; return; }
    $('signed-in').hidden = false;
    $('email').textContent = s.user.email;
    for (const acc of s.accounts) { const li = document.createElement('li'); li.textContent = acc.name + ' · ' + acc.role; $('accounts').append(li); }
    $('sign-out').addEventListener('click', async () => {
      await api('DELETE', '/v0/platform/session', undefined, s.csrf_token);
      location.assign('/sign-in');
    });
  },
};
const run = pages[document.body.dataset.page];
if (run) run().catch((err) => say(String(err), true));
`;

// @ts-check
import { $, api, failure, next, say } from '../console.js';
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

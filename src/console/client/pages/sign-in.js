// @ts-check
import { $, api, failure, say } from '../console.js';
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

// @ts-check
import { $, api, failure, next, say } from '../console.js';
const token = new URLSearchParams(location.hash.slice(1)).get('token');
history.replaceState(null, '', location.pathname);
if (!token) {
  $('confirm').disabled = true;
  say('This page needs the link from your e-mail.', true);
}
$('confirm').addEventListener('click', async () => {
  $('confirm').disabled = true;
  const r = await api('POST', '/v0/auth/email/confirm', { token });
  if (!r.ok) {
    $('confirm').disabled = false;
    return say(failure(r), true);
  }
  if (r.data.status === 'signup_required') {
    sessionStorage.setItem('platform.signup', r.data.email);
    location.assign('/signup');
    return;
  }
  location.assign(next());
});

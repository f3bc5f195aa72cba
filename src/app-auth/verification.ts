/**
 * E-mail verification for app users (`auth.email_verification: true`): sign-up sends a link
 * `<origin>/_platform/auth/verify#token=…` through the mailer (a `platform_email` job added in the
 * same transaction as the token); `POST /_platform/auth/verify {token}` marks the user verified.
 * Unverified users can sign in; `ctx.auth.currentUser` shows `verified: false`.
 */
import { oneLine } from '../lib/one-line.ts';
import { LINK_SLOT, unsentLink } from '../mail/links.ts';
import { queueMail } from '../mail/queue.ts';
import { appOrigin } from '../apps/mappers.ts';
import { tokenHash } from '../lib/tokens.ts';
import type { Deps } from '../deps.ts';
import type { AppUser } from './service.ts';
import { ApiError } from '../errors.ts';

export const VERIFY_HOURS = 48;

export async function sendVerification(
  deps: Deps,
  appId: string,
  appName: string,
  user: AppUser,
): Promise<void> {
  const row = unsentLink();
  const link = LINK_SLOT;
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('app_email_verifications')
      .values({
        ...row,
        app_id: appId,
        user_id: user.id,
        expires_at: new Date(Date.now() + VERIFY_HOURS * 3600_000),
      })
      .execute();
    const name = oneLine(appName);
    const text = `Confirm your e-mail address for ${name}:\n\n${link}\n\nThe link works for ${VERIFY_HOURS} hours. If you did not sign up, ignore this message.\n`;
    await queueMail(trx, {
      to: user.email,
      subject: `Confirm your e-mail for ${name}`,
      text,
      link: {
        table: 'app_email_verifications',
        id: row.id,
        base: `${appOrigin(deps.config, appId)}/_platform/auth/verify#token=`,
      },
    });
  });
}

export async function verifyEmail(deps: Deps, appId: string, token: string): Promise<AppUser> {
  if (!token || token.length > 100)
    throw new ApiError('invalid_verification', 'This link is invalid, expired or already used.');
  return deps.db.transaction().execute(async (trx) => {
    const v = await trx
      .updateTable('app_email_verifications')
      .set({ used_at: new Date() })
      .where('token_hash', '=', tokenHash(token))
      .where('app_id', '=', appId)
      .where('used_at', 'is', null)
      .where('expires_at', '>', new Date())
      .returning('user_id')
      .executeTakeFirst();
    if (!v)
      throw new ApiError('invalid_verification', 'This link is invalid, expired or already used.');
    const u = await trx
      .updateTable('app_users')
      .set({ verified: true, updated_at: new Date() })
      .where('id', '=', v.user_id)
      .returning(['id', 'email', 'roles', 'verified'])
      .executeTakeFirstOrThrow();
    return { id: u.id, email: u.email, roles: u.roles, verified: u.verified };
  });
}

export const VERIFY_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Confirm your e-mail</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}</style></head>
<body><h1>Confirm your e-mail</h1><p id="msg" role="status">Confirming…</p>
<script>
const token = new URLSearchParams(location.hash.slice(1)).get('token');
history.replaceState(null, '', location.pathname);
fetch('/_platform/auth/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })
  .then(async (r) => { const b = await r.json(); document.getElementById('msg').textContent = r.ok ? 'Thanks, ' + b.user.email + ' is confirmed.' : b.error.message; });
</script></body></html>`;

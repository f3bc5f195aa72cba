/**
 * A message that carries a sign-in, invitation or verification link is queued naming the row its
 * token belongs to, never the token: the sender makes a fresh token when it sends, stores only its
 * hash on that row, and puts the link into the message. So no raw token sits in the job queue, in
 * a failed job, in a backup or in the dev outbox. A retry makes another token (the link of an
 * earlier attempt stops working); a row used or expired before the mail went out sends nothing.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import { clock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { newSecretToken, tokenHash } from '../lib/tokens.ts';

/** Where a queued message's link comes from: a token row, and the URL the token is appended to. */
export type LinkRef = {
  table: 'email_auth_tokens' | 'app_email_verifications';
  id: string;
  /** the link up to its token, e.g. `http://console.localhost:8787/auth/confirm#token=` */
  base: string;
};

/** Where the link goes in a queued message's text. */
export const LINK_SLOT = '{{link}}';

/** A token row's id and a placeholder hash (of a token made and dropped here: no one holds it). */
export function unsentLink(): { id: string; token_hash: Buffer } {
  return { id: newId('lnk'), token_hash: tokenHash(newSecretToken()) };
}

/** Makes the token for `ref` now; null when its row is used, expired or gone. */
export async function mintLink(db: Executor, ref: LinkRef): Promise<string | null> {
  const token = newSecretToken();
  const table = sql.table(ref.table);
  const { rows } = await sql<{ id: string }>`
    update ${table} set token_hash = ${tokenHash(token)}
    where id = ${ref.id} and used_at is null and expires_at > ${clock.now()}
    returning id`.execute(db);
  return rows.length ? `${ref.base}${token}` : null;
}

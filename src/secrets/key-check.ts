/**
 * Every node must hold the same PLATFORM_SECRETS_KEY. The first process seals a known value with its
 * key; every later process must be able to open it, or it refuses to start. A database that already
 * holds secrets but no check (from before the check existed) is checked against one of those first.
 */
import type { Db } from '../db/database.ts';
import { ConfigError } from '../config.ts';
import { open, seal, secretAad } from './crypto.ts';

const AAD = 'platform:secrets-key-check';
const VALUE = 'this database is sealed with this key';

function mismatch(): ConfigError {
  return new ConfigError(
    "PLATFORM_SECRETS_KEY does not match the key this database's secrets are sealed with. Every node must use the same key: set PLATFORM_SECRETS_KEY to it, or copy <data dir>/secrets.key from the first node.",
  );
}

function opens(key: Buffer, aad: string, sealed: Buffer): boolean {
  try {
    open(key, aad, sealed);
    return true;
  } catch {
    return false;
  }
}

export async function verifySecretsKey(db: Db, key: Buffer): Promise<void> {
  const row = await db
    .selectFrom('secrets_key_check')
    .select('sealed')
    .where('id', '=', 1)
    .executeTakeFirst();
  if (row) {
    if (!opens(key, AAD, row.sealed)) throw mismatch();
    return;
  }
  const existing = await db
    .selectFrom('app_secrets')
    .select(['app_id', 'name', 'sealed'])
    .limit(1)
    .executeTakeFirst();
  if (existing && !opens(key, secretAad(existing.app_id, existing.name), existing.sealed))
    throw mismatch();
  await db
    .insertInto('secrets_key_check')
    .values({ id: 1, sealed: seal(key, AAD, VALUE) })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  // another process may have won the race with its own key
  const winner = await db
    .selectFrom('secrets_key_check')
    .select('sealed')
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  if (!opens(key, AAD, winner.sealed)) throw mismatch();
}

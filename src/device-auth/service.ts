/**
 * Device authorizations: the CLI starts one and polls with its device code; a signed-in person
 * enters the user code in the console and approves or denies. The API key is created when the
 * approved authorization is first polled, handed over exactly once, and never stored raw.
 */
import { MAX_LIVE_KEYS, tooManyKeys } from '../api-keys/keys.ts';
import { lockAndCountLiveKeys } from '../api-keys/queries.ts';
import { randomInt } from 'node:crypto';
import type { Db, Executor } from '../db/database.ts';
import type { DeviceStatus } from '../db/schema.ts';
import { ApiError, errors } from '../errors.ts';
import { clock, fromNow } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { newSecretToken, tokenHash } from '../lib/tokens.ts';
import { generateApiKey } from '../api-keys/keys.ts';
import { USER_CODE_ALPHABET, type DevicePoll } from './schemas.ts';

export const DEVICE_LIFETIME_SECONDS = 600;
export const POLL_INTERVAL_SECONDS = 5;

/** `WDJBMJHT` → `WDJB-MJHT`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

function newUserCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

export async function startDevice(
  db: Db,
  clientName: string,
  clientAddress: string | null = null,
): Promise<{ deviceCode: string; userCode: string }> {
  const deviceCode = newSecretToken();
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    try {
      await db
        .insertInto('device_authorizations')
        .values({
          id: newId('dev'),
          device_code_hash: tokenHash(deviceCode),
          user_code: userCode,
          client_name: clientName,
          client_address: clientAddress,
          created_at: clock.now(),
          expires_at: fromNow(DEVICE_LIFETIME_SECONDS * 1000),
        })
        .execute();
      return { deviceCode, userCode };
    } catch (err) {
      // 20^8 codes: a clash with a pending one is rare; try another
      if (
        (err as { constraint?: string }).constraint !== 'device_authorizations_pending_code_key' ||
        attempt >= 4
      )
        throw err;
    }
  }
}

type Row = {
  id: string;
  user_code: string;
  client_name: string;
  client_address: string | null;
  status: DeviceStatus;
  created_at: Date;
  expires_at: Date;
};
export type ShownStatus = DeviceStatus | 'expired';

/** A pending authorization past its end shows as expired. */
export function shownStatus(row: Pick<Row, 'status' | 'expires_at'>): ShownStatus {
  return row.status === 'pending' && row.expires_at <= clock.now() ? 'expired' : row.status;
}

/** The newest authorization with this user code, or undefined. */
export async function findByUserCode(
  db: Executor,
  userCode: string,
  lock = false,
): Promise<Row | undefined> {
  if (!/^[A-Z]{8}$/.test(userCode)) return undefined;
  let q = db
    .selectFrom('device_authorizations')
    .select([
      'id',
      'user_code',
      'client_name',
      'client_address',
      'status',
      'created_at',
      'expires_at',
    ])
    .where('user_code', '=', userCode)
    .orderBy('created_at', 'desc')
    .limit(1);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst();
}

export const invalidCode = () =>
  new ApiError(
    'invalid_device_authorization',
    'That code is unknown, expired or already used. Check the code your terminal shows.',
  );

/** Approves or denies a pending authorization on behalf of `userId` (approval names the account the key will act on by default). */
export async function decide(
  db: Db,
  input: { userCode: string; userId: string; approve: boolean; accountId: string | null },
): Promise<{ status: 'approved' | 'denied' }> {
  return db.transaction().execute(async (trx) => {
    const row = await findByUserCode(trx, input.userCode, true);
    if (!row) throw invalidCode();
    const status = shownStatus(row);
    if (status === 'expired')
      throw new ApiError(
        'device_authorization_expired',
        'That code has expired. Run `platform login` again for a new one.',
      );
    if (status !== 'pending')
      throw new ApiError('invalid_device_authorization', `That code was already ${status}.`, {
        status,
      });
    let accountId: string | null = null;
    if (input.approve) {
      accountId =
        input.accountId ??
        (
          await trx
            .selectFrom('users')
            .select('default_account_id')
            .where('id', '=', input.userId)
            .executeTakeFirstOrThrow()
        ).default_account_id;
      const member = accountId
        ? await trx
            .selectFrom('memberships')
            .select('role')
            .where('account_id', '=', accountId)
            .where('user_id', '=', input.userId)
            .executeTakeFirst()
        : undefined;
      if (!member) throw errors.notFound('Account');
      // the key is made at the next poll; refuse now, where the approver reads why
      const live = await lockAndCountLiveKeys(trx, input.userId);
      if (live >= MAX_LIVE_KEYS) throw tooManyKeys(live);
    }
    await trx
      .updateTable('device_authorizations')
      .set({
        status: input.approve ? 'approved' : 'denied',
        approved_by_user_id: input.userId,
        account_id: accountId,
        decided_at: clock.now(),
      })
      .where('id', '=', row.id)
      .execute();
    return { status: input.approve ? 'approved' : 'denied' };
  });
}

/** One poll by the CLI: RFC 8628's answers, with `slow_down` adding 5 seconds (kept) to a client polling too fast. */
export async function poll(db: Db, deviceCode: string): Promise<DevicePoll> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(deviceCode)) throw invalidCode();
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('device_authorizations')
      .selectAll()
      .where('device_code_hash', '=', tokenHash(deviceCode))
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw invalidCode();
    const now = clock.now();
    const status = shownStatus(row);
    if (status === 'expired' || status === 'denied' || status === 'consumed') return { status };
    if (status === 'approved') {
      const key = generateApiKey();
      const keyId = newId('key');
      await trx
        .insertInto('api_keys')
        .values({
          id: keyId,
          user_id: row.approved_by_user_id!,
          name: row.client_name,
          key_prefix: key.prefix,
          key_hash: key.hash,
        })
        .execute();
      await trx
        .updateTable('device_authorizations')
        .set({ status: 'consumed', api_key_id: keyId, last_polled_at: now })
        .where('id', '=', row.id)
        .execute();
      return {
        status: 'approved',
        api_key: key.raw,
        api_key_id: keyId,
        key_prefix: key.prefix,
        account_id: row.account_id!,
      };
    }
    const tooSoon =
      row.last_polled_at !== null &&
      now.getTime() - row.last_polled_at.getTime() < row.interval_seconds * 1000;
    const interval = tooSoon ? row.interval_seconds + 5 : row.interval_seconds;
    await trx
      .updateTable('device_authorizations')
      .set({ last_polled_at: now, interval_seconds: interval })
      .where('id', '=', row.id)
      .execute();
    return { status: tooSoon ? 'slow_down' : 'authorization_pending', interval };
  });
}

/**
 * `/v0/auth/device/*`: the CLI starts and polls with no authentication; a signed-in person reads,
 * approves or denies from the console (session and CSRF). Wrong user codes are limited per
 * session and per client address, and once over the limit every guess is refused.
 */
import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { enforce, hit, LIMITS, peek, throttled } from '../abuse/limits.ts';
import { publicUrl } from '../config.ts';
import { sessionOnly } from '../http/auth.ts';
import { clientAddress } from '../http/client.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody, query, queryOf } from '../http/validate.ts';
import {
  DeviceApproval,
  DeviceApproveRequest,
  DeviceDecision,
  DeviceDenyRequest,
  DevicePoll,
  DevicePollRequest,
  DeviceStart,
  DeviceStartRequest,
  UserCode,
} from './schemas.ts';
import {
  decide,
  DEVICE_LIFETIME_SECONDS,
  findByUserCode,
  formatUserCode,
  invalidCode,
  poll,
  POLL_INTERVAL_SECONDS,
  shownStatus,
  startDevice,
} from './service.ts';

const tags = ['Device authorization'];
export const ApprovalQuery = v.strictObject({ user_code: UserCode });

const start = operation({
  operationId: 'startDeviceAuthorization',
  summary: 'Start a browser-approved login (CLI)',
  description:
    'Show `user_code` and `verification_uri` to the person, then poll with `device_code` every `interval` seconds. Codes live 10 minutes.',
  tags,
  security: 'none',
  responses: { 200: DeviceStart },
  errors: ['abuse_throttled'],
});
const pollOp = operation({
  operationId: 'pollDeviceAuthorization',
  summary: 'Poll a device authorization (CLI)',
  description:
    '`authorization_pending` until the person decides; `slow_down` with a longer `interval` when polled too fast (kept for later polls); `approved` with the API key exactly once, then `consumed`; `denied`; `expired`.',
  tags,
  security: 'none',
  responses: { 200: DevicePoll },
  errors: ['invalid_device_authorization', 'abuse_throttled'],
});
const approval = operation({
  operationId: 'getDeviceAuthorization',
  summary: 'Read a device authorization by its user code (console)',
  tags,
  security: 'session',
  responses: { 200: DeviceApproval },
  errors: ['invalid_device_authorization', 'abuse_throttled'],
});
const approve = operation({
  operationId: 'approveDeviceAuthorization',
  summary: 'Approve a device authorization (console)',
  description:
    'Creates an API key for you, named after the client, which only the polling client receives. `account_id` (default: your default account) is the account the CLI will act on. A user who holds the most live keys allowed gets 409 `conflict` (`details {live_keys, limit}`).',
  tags,
  security: 'session',
  responses: { 200: DeviceDecision },
  errors: [
    'conflict',
    'invalid_device_authorization',
    'device_authorization_expired',
    'abuse_throttled',
    'not_found',
  ],
});
const deny = operation({
  operationId: 'denyDeviceAuthorization',
  summary: 'Deny a device authorization (console)',
  tags,
  security: 'session',
  responses: { 200: DeviceDecision },
  errors: ['invalid_device_authorization', 'device_authorization_expired', 'abuse_throttled'],
});

/** Before authentication: what the CLI calls. */
export function deviceStartRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.post('/start', start, jsonBody(DeviceStartRequest, { optional: true }), async (c) => {
    await enforce(c.var.deps.db, 'logins started', [
      [`device-start:ip:${clientAddress(c)}`, LIMITS.deviceStartPerClient],
    ]);
    const { client_name } = bodyOf(c, DeviceStartRequest);
    const { deviceCode, userCode } = await startDevice(
      c.var.deps.db,
      client_name ?? 'platform CLI',
      clientAddress(c),
    );
    const page = `${publicUrl(c.var.deps.config, c.var.deps.config.hosts.console)}/device`;
    const shown = formatUserCode(userCode);
    return start.reply(c, 200, {
      device_code: deviceCode,
      user_code: shown,
      verification_uri: page,
      verification_uri_complete: `${page}?user_code=${shown}`,
      expires_in: DEVICE_LIFETIME_SECONDS,
      interval: POLL_INTERVAL_SECONDS,
    });
  });
  r.post('/poll', pollOp, jsonBody(DevicePollRequest), async (c) => {
    await enforce(c.var.deps.db, 'polls', [
      [`device-poll:ip:${clientAddress(c)}`, LIMITS.devicePollPerClient],
    ]);
    c.header('Cache-Control', 'no-store');
    return pollOp.reply(
      c,
      200,
      await poll(c.var.deps.db, bodyOf(c, DevicePollRequest).device_code),
    );
  });
  return r;
}

/** Runs `lookup` behind the wrong-code limits: refused outright once over, and a miss counts. */
async function guarded<T>(
  c: Context<Env>,
  userCode: string,
  lookup: (row: NonNullable<Awaited<ReturnType<typeof findByUserCode>>>) => Promise<T>,
): Promise<T> {
  const db = c.var.deps.db;
  const keys = [
    [`user-code-miss:session:${sessionOnly(c).id}`, LIMITS.userCodeMissesPerSession],
    [`user-code-miss:ip:${clientAddress(c)}`, LIMITS.userCodeMissesPerClient],
  ] as const;
  for (const [key, limit] of keys) {
    const state = await peek(db, key, limit);
    if (state.limited) throw throttled(state, 'wrong codes');
  }
  const known = await findByUserCode(db, userCode);
  if (!known) {
    for (const [key, limit] of keys) await hit(db, key, limit);
    throw invalidCode();
  }
  return lookup(known);
}

/** After authentication: what the console calls, with a session. */
export function deviceApprovalRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/approval', approval, query(ApprovalQuery), async (c) => {
    const { user_code } = queryOf(c, ApprovalQuery);
    const row = await guarded(c, user_code, async (found) => found);
    return approval.reply(c, 200, {
      user_code: formatUserCode(row.user_code),
      client_name: row.client_name,
      client_address: row.client_address,
      status: shownStatus(row),
      created_at: row.created_at.toISOString(),
      expires_at: row.expires_at.toISOString(),
    });
  });
  r.post('/approve', approve, jsonBody(DeviceApproveRequest), async (c) => {
    const { user_code, account_id } = bodyOf(c, DeviceApproveRequest);
    const result = await guarded(c, user_code, () =>
      decide(c.var.deps.db, {
        userCode: user_code,
        userId: c.var.actor.userId,
        approve: true,
        accountId: account_id ?? null,
      }),
    );
    return approve.reply(c, 200, { user_code: formatUserCode(user_code), status: result.status });
  });
  r.post('/deny', deny, jsonBody(DeviceDenyRequest), async (c) => {
    const { user_code } = bodyOf(c, DeviceDenyRequest);
    const result = await guarded(c, user_code, () =>
      decide(c.var.deps.db, {
        userCode: user_code,
        userId: c.var.actor.userId,
        approve: false,
        accountId: null,
      }),
    );
    return deny.reply(c, 200, { user_code: formatUserCode(user_code), status: result.status });
  });
  return r;
}

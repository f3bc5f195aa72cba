/** RFC 8628 device authorization for `platform login` (docs/decisions/sign-in-and-members.md). */
import * as v from 'valibot';
import { component, DateTime, Url } from '../openapi/components.ts';

export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** Case-insensitive, dash and spaces optional: `wdjb-mjht`, `WDJBMJHT`. */
export const UserCode = v.pipe(
  v.string(),
  v.maxLength(20, 'must be a code like WDJB-MJHT'),
  v.transform((s) => s.toUpperCase().replace(/[\s-]/g, '')),
);

export const DeviceStartRequest = component(
  'DeviceStartRequest',
  v.strictObject({
    client_name: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.minLength(1, 'must be 1 to 100 characters'),
        v.maxLength(100, 'must be 1 to 100 characters'),
      ),
    ),
  }),
);

export const DeviceStart = component(
  'DeviceStart',
  v.strictObject({
    device_code: v.string(),
    user_code: v.string(),
    verification_uri: Url,
    verification_uri_complete: Url,
    expires_in: v.number(),
    interval: v.number(),
  }),
);
export type DeviceStart = v.InferOutput<typeof DeviceStart>;

export const DeviceApproval = component(
  'DeviceApproval',
  v.strictObject({
    user_code: v.string(),
    /** What the requesting program calls itself: its claim, not a fact. */
    client_name: v.string(),
    /** The address the request started from (the TCP peer; behind a proxy, the proxy's). */
    client_address: v.nullable(v.string()),
    status: v.picklist(['pending', 'approved', 'denied', 'expired', 'consumed']),
    created_at: DateTime,
    expires_at: DateTime,
  }),
);

export const DeviceApproveRequest = component(
  'DeviceApproveRequest',
  v.strictObject({
    user_code: UserCode,
    account_id: v.optional(
      v.pipe(v.string(), v.regex(/^acct_[0-9a-z]{1,64}$/, 'must be an account id (acct_...)')),
    ),
  }),
);
export const DeviceDenyRequest = component(
  'DeviceDenyRequest',
  v.strictObject({ user_code: UserCode }),
);
export const DeviceDecision = component(
  'DeviceDecision',
  v.strictObject({ user_code: v.string(), status: v.picklist(['approved', 'denied']) }),
);

export const DevicePollRequest = component(
  'DevicePollRequest',
  v.strictObject({ device_code: v.pipe(v.string(), v.maxLength(200)) }),
);

export const DevicePoll = component(
  'DevicePoll',
  v.union([
    v.strictObject({
      status: v.picklist(['authorization_pending', 'slow_down']),
      interval: v.number(),
    }),
    v.strictObject({
      status: v.literal('approved'),
      api_key: v.pipe(v.string(), v.startsWith('ap_')),
      api_key_id: v.string(),
      key_prefix: v.string(),
      account_id: v.string(),
    }),
    v.strictObject({ status: v.picklist(['denied', 'expired', 'consumed']) }),
  ]),
);
export type DevicePoll = v.InferOutput<typeof DevicePoll>;

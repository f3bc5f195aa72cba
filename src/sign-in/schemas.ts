/** Bodies of passwordless sign-in, sign-up and the console session (docs/decisions/sign-in-and-members.md). */
import * as v from 'valibot';
import { AccountMembership } from '../accounts/schemas.ts';
import { component, DateTime } from '../openapi/components.ts';
import { ONE_LINE } from '../lib/one-line.ts';
import { Email, Username } from '../users/service.ts';

export const EmailLinkRequest = component('EmailLinkRequest', v.strictObject({ email: Email }));
export const EmailLinkSent = component(
  'EmailLinkSent',
  v.strictObject({ status: v.literal('sent') }),
);

export const EmailConfirmRequest = component(
  'EmailConfirmRequest',
  v.strictObject({ token: v.pipe(v.string(), v.maxLength(200)) }),
);

export const PlatformUser = component(
  'PlatformUser',
  v.strictObject({ id: v.string(), email: v.string(), username: v.nullable(v.string()) }),
);

export const SignedIn = component(
  'SignedIn',
  v.strictObject({
    status: v.literal('signed_in'),
    user: PlatformUser,
    default_account_id: v.nullable(v.string()),
    csrf_token: v.string(),
  }),
);
export type SignedIn = v.InferOutput<typeof SignedIn>;

export const SignupRequired = component(
  'SignupRequired',
  v.strictObject({ status: v.literal('signup_required'), email: v.string() }),
);

export const SignupCompleteRequest = component(
  'SignupCompleteRequest',
  v.strictObject({
    username: Username,
    account_name: v.optional(
      v.pipe(
        v.string(),
        v.trim(),
        v.minLength(1, 'must be 1 to 120 characters'),
        v.maxLength(120, 'must be 1 to 120 characters'),
        v.regex(ONE_LINE, 'must be one line of printable text'),
      ),
    ),
  }),
);

export const PlatformSession = component(
  'PlatformSession',
  v.strictObject({
    user: PlatformUser,
    accounts: v.array(AccountMembership),
    default_account_id: v.nullable(v.string()),
    csrf_token: v.string(),
    expires_at: DateTime,
    /** the user is one of this server's operators (the console shows its Operator section) */
    operator: v.boolean(),
  }),
);
export type PlatformSession = v.InferOutput<typeof PlatformSession>;

export const SignedOut = component(
  'SignedOut',
  v.strictObject({ status: v.literal('signed_out') }),
);

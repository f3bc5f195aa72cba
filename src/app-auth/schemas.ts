/** App-user administration records: an app user as the team sees them, pages, changes, invitations. */
import * as v from 'valibot';
import { pageQuery, timeIdCursor } from '../http/paging.ts';
import { component, DateTime } from '../openapi/components.ts';

export const AppUserRecord = component(
  'AppUserRecord',
  v.strictObject({
    id: v.string(),
    email: v.string(),
    roles: v.array(v.string()),
    verified: v.boolean(),
    disabled: v.boolean(),
    created_at: DateTime,
    last_sign_in_at: v.nullable(DateTime),
  }),
);
export const AppUserList = component(
  'AppUserList',
  v.strictObject({
    app_id: v.string(),
    app_users: v.array(AppUserRecord),
    cursor: v.nullable(v.string()),
  }),
);
export const AppUserChange = v.strictObject({
  roles: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(50))),
  disabled: v.optional(v.boolean()),
});
export const AppUserSignedOut = component(
  'AppUserSignedOut',
  v.strictObject({ id: v.string(), sessions_revoked: v.number() }),
);
export const AppUserDeleted = component(
  'AppUserDeleted',
  v.strictObject({ id: v.string(), deleted: v.literal(true) }),
);
export const PendingInviteList = component(
  'PendingInviteList',
  v.strictObject({
    app_id: v.string(),
    invites: v.array(
      v.strictObject({
        invite_id: v.string(),
        email: v.string(),
        roles: v.array(v.string()),
        expires_at: DateTime,
        created_at: DateTime,
      }),
    ),
  }),
);
export const InviteWithdrawn = component(
  'InviteWithdrawn',
  v.strictObject({ invite_id: v.string(), withdrawn: v.literal(true) }),
);

export const AppUsersQuery = v.strictObject({
  q: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200),
      v.check((s) => !s.includes('\0'), 'must not contain NUL'),
    ),
  ),
  ...pageQuery(timeIdCursor.decode),
});

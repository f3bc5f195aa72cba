/** Who is in an account, and invitations (docs/decisions/sign-in-and-members.md, "Team members"). */
import * as v from 'valibot';
import { component, DateTime } from '../openapi/components.ts';
import { Email } from '../users/service.ts';

export const RoleValue = v.picklist(
  ['owner', 'admin', 'developer', 'viewer'],
  'must be owner, admin, developer or viewer',
);

export const Member = component(
  'Member',
  v.strictObject({
    user_id: v.string(),
    email: v.string(),
    username: v.nullable(v.string()),
    role: RoleValue,
    joined_at: DateTime,
  }),
);
export type Member = v.InferOutput<typeof Member>;

export const Invitation = component(
  'Invitation',
  v.strictObject({
    invitation_id: v.pipe(v.string(), v.startsWith('inv_')),
    email: v.string(),
    role: RoleValue,
    expires_at: DateTime,
  }),
);
export type Invitation = v.InferOutput<typeof Invitation>;

export const MemberList = component(
  'MemberList',
  v.strictObject({
    account_id: v.string(),
    members: v.array(Member),
    invitations: v.array(Invitation),
  }),
);
export const InviteMemberRequest = component(
  'InviteMemberRequest',
  v.strictObject({ email: Email, role: RoleValue }),
);
export const ChangeRoleRequest = component(
  'ChangeRoleRequest',
  v.strictObject({ role: RoleValue }),
);
export const MemberRemoved = component(
  'MemberRemoved',
  v.strictObject({ account_id: v.string(), user_id: v.string(), removed: v.literal(true) }),
);
export const InvitationRevoked = component(
  'InvitationRevoked',
  v.strictObject({ account_id: v.string(), invitation_id: v.string(), revoked: v.literal(true) }),
);

/** Account membership records. */
import * as v from 'valibot';
import { component } from '../openapi/components.ts';

export const AccountMembership = component(
  'AccountMembership',
  v.strictObject({
    id: v.string(),
    account_id: v.string(),
    name: v.string(),
    owner_user_id: v.string(),
    role: v.picklist(['owner', 'admin', 'developer', 'viewer']),
  }),
);
export type AccountMembership = v.InferOutput<typeof AccountMembership>;

export const AccountList = component(
  'AccountList',
  v.strictObject({
    accounts: v.array(AccountMembership),
    default_account_id: v.nullable(v.string()),
  }),
);
export type AccountList = v.InferOutput<typeof AccountList>;

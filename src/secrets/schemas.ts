/** Secret records: names and presence, never values. */
import * as v from 'valibot';
import { component, DateTime } from '../openapi/components.ts';

export const SecretSummary = component(
  'SecretSummary',
  v.strictObject({
    name: v.string(),
    present: v.boolean(),
    created_at: v.optional(DateTime),
    updated_at: v.optional(DateTime),
  }),
);
export type SecretSummary = v.InferOutput<typeof SecretSummary>;

export const SecretList = component(
  'SecretList',
  v.strictObject({ app_id: v.string(), secrets: v.array(SecretSummary) }),
);
export type SecretList = v.InferOutput<typeof SecretList>;

/** DELETE answers whether a secret was there to delete; the name is absent afterwards either way. */
export const SecretDeleted = component(
  'SecretDeleted',
  v.strictObject({
    app_id: v.string(),
    name: v.string(),
    deleted: v.boolean(),
    present: v.literal(false),
  }),
);
export type SecretDeleted = v.InferOutput<typeof SecretDeleted>;

/** API key records: metadata only; the raw key appears once, in the creation answer. */
import * as v from 'valibot';
import { component, DateTime } from '../openapi/components.ts';

const KeyName = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must be 1 to 120 characters after trimming'),
  v.maxLength(120, 'must be 1 to 120 characters after trimming'),
);
export const CreateApiKeyRequest = component(
  'CreateApiKeyRequest',
  v.strictObject({ name: v.optional(KeyName) }),
);
export const RenameApiKeyRequest = component(
  'RenameApiKeyRequest',
  v.strictObject({ name: KeyName }),
);

const metadata = {
  id: v.string(),
  api_key_id: v.string(),
  key_prefix: v.string(),
  name: v.string(),
  created_at: DateTime,
  last_used_at: v.nullable(DateTime),
  revoked_at: v.nullable(DateTime),
};

export const ApiKeyMetadata = component('ApiKeyMetadata', v.strictObject(metadata));
export type ApiKeyMetadata = v.InferOutput<typeof ApiKeyMetadata>;

export const ApiKeyList = component(
  'ApiKeyList',
  v.strictObject({
    api_keys: v.array(ApiKeyMetadata),
    /** Pass back as `?cursor=` for the next (older) page; null on the last. */
    cursor: v.nullable(v.string()),
  }),
);
export type ApiKeyList = v.InferOutput<typeof ApiKeyList>;

export const CreatedApiKey = component(
  'CreatedApiKey',
  v.strictObject({ ...metadata, api_key: v.pipe(v.string(), v.startsWith('ap_')) }),
);
export type CreatedApiKey = v.InferOutput<typeof CreatedApiKey>;

/** `revoked` is false when the key had been revoked before (the call is idempotent). */
export const RevokedApiKey = component(
  'RevokedApiKey',
  v.strictObject({ ...metadata, revoked: v.boolean() }),
);
export type RevokedApiKey = v.InferOutput<typeof RevokedApiKey>;

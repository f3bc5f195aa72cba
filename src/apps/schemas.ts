/** The records `/v0/apps` answers with (contract: "Response records"). */
import * as v from 'valibot';
import { component, DateTime, FreeObject, Url } from '../openapi/components.ts';

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const ReleaseId = v.pipe(v.string(), v.startsWith('rel_'));
const ActivationStatus = v.picklist([
  'live',
  'inactive',
  'pending_secrets',
  'requires_migration',
  'failed',
]);

export const AppSummary = component(
  'AppSummary',
  v.strictObject({
    app_id: v.string(),
    name: v.string(),
    summary: v.optional(v.nullable(v.string())),
    visibility: v.picklist(['public', 'private']),
    origin: Url,
    created_at: DateTime,
    updated_at: DateTime,
    deleted_at: v.optional(v.nullable(DateTime)),
    live_release_id: v.nullable(v.string()),
    username: v.optional(v.string()),
    /** the account that owns the app (an addition to the contract's AppSummary) */
    account_id: v.string(),
  }),
);
export type AppSummary = v.InferOutput<typeof AppSummary>;

export const AppList = component('AppList', v.strictObject({ apps: v.array(AppSummary) }));
export type AppList = v.InferOutput<typeof AppList>;

export const ActivationResult = component(
  'ActivationResult',
  v.strictObject({
    status: ActivationStatus,
    reasons: v.array(v.string()),
    missing_secrets: v.array(v.string()),
    previous_release_id: v.nullable(v.string()),
  }),
);
export type ActivationResult = v.InferOutput<typeof ActivationResult>;

/** A preview's own origin and a link that lets a browser in until `expires_at` (src/releases/previews.ts). */
export const PreviewLink = component(
  'PreviewLink',
  v.strictObject({
    release_id: ReleaseId,
    origin: Url,
    url: Url,
    expires_at: DateTime,
  }),
);
export type PreviewLink = v.InferOutput<typeof PreviewLink>;

export const PreviewLinksRevoked = component(
  'PreviewLinksRevoked',
  v.strictObject({
    app_id: v.string(),
    /** links issued up to this moment open none of the app's previews */
    revoked_at: DateTime,
  }),
);

export const PublishAppResponse = component(
  'PublishAppResponse',
  v.strictObject({
    status: v.picklist(['published', 'stored']),
    app_id: v.string(),
    account_id: v.string(),
    release_id: ReleaseId,
    origin: Url,
    previous_release_id: v.nullable(ReleaseId),
    activation: ActivationResult,
    /** A release published as a preview (an addition): where it is served, and a link that opens it. */
    preview: v.optional(PreviewLink),
  }),
);
export type PublishAppResponse = v.InferOutput<typeof PublishAppResponse>;

/** Why a release is not live: the code of its activation status and what it is waiting for. */
export const ActivationError = component(
  'ActivationError',
  v.strictObject({
    code: v.picklist(['pending_secrets', 'requires_migration', 'failed']),
    message: v.string(),
    missing_secrets: v.optional(v.array(v.string())),
    reasons: v.optional(v.array(v.string())),
  }),
);

export const ReleaseSummary = component(
  'ReleaseSummary',
  v.strictObject({
    release_id: ReleaseId,
    message: v.nullable(v.string()),
    created_at: DateTime,
    activation_status: ActivationStatus,
    activation_error: v.nullable(ActivationError),
    is_live: v.boolean(),
    /** present on a preview (an addition): served at `preview_origin` until made live */
    preview: v.optional(v.literal(true)),
    preview_origin: v.optional(Url),
    created_by: v.strictObject({
      api_key_id: v.nullable(v.string()),
      key_prefix: v.nullable(v.string()),
      /** the person whose key published it (an addition; absent where unknown) */
      email: v.optional(v.nullable(v.string())),
    }),
  }),
);
export type ReleaseSummary = v.InferOutput<typeof ReleaseSummary>;

export const ReleaseList = component(
  'ReleaseList',
  v.strictObject({ app_id: v.string(), releases: v.array(ReleaseSummary) }),
);
export type ReleaseList = v.InferOutput<typeof ReleaseList>;

export const ResourceState = component(
  'ResourceState',
  v.strictObject({
    resource_type: v.picklist(['auth', 'data', 'files', 'secrets', 'jobs', 'webhooks']),
    resource_name: v.string(),
    spec: FreeObject,
    /** In the resources view, for `data` and `files`: what the collection or store holds now (live rows or files, and bytes as the storage quota counts them). */
    usage: v.optional(
      v.union([
        v.strictObject({ rows: Count, bytes: Count }),
        v.strictObject({ files: Count, bytes: Count }),
      ]),
    ),
  }),
);
export const ResourceList = component(
  'ResourceList',
  v.strictObject({
    app_id: v.string(),
    resources: v.array(ResourceState),
    /** What the app stores, whether or not the live release declares it (`storage.bytes`, the metric of the account's storage quota). */
    usage: v.strictObject({ 'storage.bytes': Count }),
  }),
);
export type ResourceList = v.InferOutput<typeof ResourceList>;

export const UnpublishResponse = component(
  'UnpublishResponse',
  v.strictObject({ app_id: v.string(), status: v.literal('unpublished'), deleted_at: DateTime }),
);
export type UnpublishResponse = v.InferOutput<typeof UnpublishResponse>;

export const RollbackResponse = component(
  'RollbackResponse',
  v.strictObject({
    app_id: v.string(),
    release_id: ReleaseId,
    previous_release_id: v.nullable(ReleaseId),
    origin: Url,
    status: v.literal('rolled_back'),
  }),
);
export type RollbackResponse = v.InferOutput<typeof RollbackResponse>;

/** `POST /v0/apps/<id>/erase` (an addition): names the app again, so a request meant for another is refused. */
export const EraseAppRequest = component(
  'EraseAppRequest',
  v.strictObject({ confirm: v.pipe(v.string(), v.maxLength(64)) }),
);

export const AppDataErased = component(
  'AppDataErased',
  v.strictObject({
    app_id: v.string(),
    erased_at: DateTime,
    /** what was there to erase: live rows and files, KV keys, R2 objects, app users, set secrets */
    erased: v.strictObject({
      rows: Count,
      files: Count,
      kv_keys: Count,
      r2_objects: Count,
      app_users: Count,
      secrets: Count,
    }),
    /** the storage the erased rows and files counted against the account */
    freed_bytes: Count,
  }),
);
export type AppDataErased = v.InferOutput<typeof AppDataErased>;

/** The bindings browser's routes (src/bindings/routes.ts), typed as the rest of V0Routes. */
import type {
  BindingsOverview,
  KvKeyPage,
  KvKeyQuery,
  KvKeysQuery,
  KvValue,
  KvValueDeleted,
  KvValuePut,
  QueueMessagePage,
  QueueMessagesQuery,
  QueuePurged,
  QueueRetried,
  QueueRetry,
  R2KeyQuery,
  R2ObjectDeleted,
  R2ObjectPage,
  R2ObjectsQuery,
} from '../bindings/schemas.ts';
import type { D1QueryBody, D1QueryResult } from '../sql/routes.ts';
import type { In, Op, Out } from './op.ts';

export type BindingRoutes = {
  'GET /v0/apps/{app_id}/bindings': Op<Out<typeof BindingsOverview>>;
  'GET /v0/apps/{app_id}/kv/{namespace}/keys': Op<
    Out<typeof KvKeyPage>,
    never,
    In<typeof KvKeysQuery>
  >;
  'GET /v0/apps/{app_id}/kv/{namespace}/value': Op<
    Out<typeof KvValue>,
    never,
    In<typeof KvKeyQuery>
  >;
  'PUT /v0/apps/{app_id}/kv/{namespace}/value': Op<
    Out<typeof KvValue>,
    In<typeof KvValuePut>,
    In<typeof KvKeyQuery>
  >;
  'DELETE /v0/apps/{app_id}/kv/{namespace}/value': Op<
    Out<typeof KvValueDeleted>,
    never,
    In<typeof KvKeyQuery>
  >;
  'GET /v0/apps/{app_id}/r2/{bucket}/objects': Op<
    Out<typeof R2ObjectPage>,
    never,
    In<typeof R2ObjectsQuery>
  >;
  /** the object's bytes (a download) */
  'GET /v0/apps/{app_id}/r2/{bucket}/object': Op<string, never, In<typeof R2KeyQuery>>;
  'DELETE /v0/apps/{app_id}/r2/{bucket}/object': Op<
    Out<typeof R2ObjectDeleted>,
    never,
    In<typeof R2KeyQuery>
  >;
  'POST /v0/apps/{app_id}/queues/{queue}/purge': Op<Out<typeof QueuePurged>>;
  'GET /v0/apps/{app_id}/queues/{queue}/messages': Op<
    Out<typeof QueueMessagePage>,
    never,
    In<typeof QueueMessagesQuery>
  >;
  'POST /v0/apps/{app_id}/queues/{queue}/retry': Op<
    Out<typeof QueueRetried>,
    In<typeof QueueRetry>
  >;
  'POST /v0/apps/{app_id}/d1/{database}/query': Op<
    Out<typeof D1QueryResult>,
    In<typeof D1QueryBody>
  >;
  'GET /v0/apps/{app_id}/d1/{database}/export': Op<string>;
};

export const BINDING_ROUTES = {
  'GET /v0/apps/{app_id}/bindings': 1,
  'GET /v0/apps/{app_id}/kv/{namespace}/keys': 1,
  'GET /v0/apps/{app_id}/kv/{namespace}/value': 1,
  'PUT /v0/apps/{app_id}/kv/{namespace}/value': 1,
  'DELETE /v0/apps/{app_id}/kv/{namespace}/value': 1,
  'GET /v0/apps/{app_id}/r2/{bucket}/objects': 1,
  'GET /v0/apps/{app_id}/r2/{bucket}/object': 1,
  'DELETE /v0/apps/{app_id}/r2/{bucket}/object': 1,
  'POST /v0/apps/{app_id}/queues/{queue}/purge': 1,
  'GET /v0/apps/{app_id}/queues/{queue}/messages': 1,
  'POST /v0/apps/{app_id}/queues/{queue}/retry': 1,
  'POST /v0/apps/{app_id}/d1/{database}/query': 1,
  'GET /v0/apps/{app_id}/d1/{database}/export': 1,
} satisfies Record<keyof BindingRoutes, 1>;

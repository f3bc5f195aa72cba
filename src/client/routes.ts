/**
 * Every documented control-plane operation as /openapi.json spells it ("METHOD /path/{param}"), with
 * its request body, query and success body typed from the same valibot schemas that produce the
 * document (`V0Routes`), and the same list at run time (`V0_ROUTES`); `test/contract/openapi.test.ts`
 * checks it against the document both ways. The client over it is `v0.ts`.
 */
import { BINDING_ROUTES, type BindingRoutes } from './routes-bindings.ts';
import type { In, Op, Out } from './op.ts';
import type { AccountList } from '../accounts/schemas.ts';
import type {
  ApiKeyList,
  ApiKeyMetadata,
  CreateApiKeyRequest,
  CreatedApiKey,
  RenameApiKeyRequest,
  RevokedApiKey,
} from '../api-keys/schemas.ts';
import type { AdminInviteRequest, AdminInviteResponse } from '../app-auth/invites.ts';
import type {
  AppUserChange,
  AppUserDeleted,
  AppUserList,
  AppUserRecord,
  AppUserSignedOut,
  AppUsersQuery,
  InviteWithdrawn,
  PendingInviteList,
} from '../app-auth/schemas.ts';
import type { CreateQuery, PublishQuery } from '../apps/routes.ts';
import type { RepublishRequest, RollbackRequest } from '../releases/routes.ts';
import type {
  AppDataErased,
  AppList,
  AppSummary,
  EraseAppRequest,
  PreviewLink,
  PreviewLinksRevoked,
  PublishAppResponse,
  ReleaseList,
  ResourceList,
  RollbackResponse,
  UnpublishResponse,
} from '../apps/schemas.ts';
import type { ApprovalQuery } from '../device-auth/routes.ts';
import type {
  DeviceApproval,
  DeviceApproveRequest,
  DeviceDecision,
  DeviceDenyRequest,
  DevicePoll,
  DevicePollRequest,
  DeviceStart,
  DeviceStartRequest,
} from '../device-auth/schemas.ts';
import type {
  DataRow,
  DataRowDeleted,
  DataRowPage,
  RowFields,
  RowsQuery,
} from '../data/schemas.ts';
import type {
  FilesQuery,
  SignedFileUrl,
  StoredFileDeleted,
  StoredFilePage,
} from '../files/schemas.ts';
import type {
  AccountsQuery,
  ActionsQuery,
  BillingStateRequest,
  FlagRequest,
  OperatorAccountList,
  OperatorActionList,
  OperatorAppList,
  OperatorList,
  OperatorBillingStateResult,
  OperatorFlagResult,
  OperatorPlanResult,
  ServerHealth,
  SetPlanRequest,
  BackupOverview,
  BackupRunRecord,
} from '../operators/schemas.ts';
import type { EventsQuery } from '../events/routes.ts';
import type { ApiKeysQuery } from '../api-keys/routes.ts';
import type { EventGroupList, EventPage, EventTypeList } from '../events/schemas.ts';
import type { HealthResponse } from '../http/health.ts';
import type { PublishBody } from '../manifest/schema.ts';
import type {
  ChangeRoleRequest,
  Invitation,
  InvitationRevoked,
  InviteMemberRequest,
  Member,
  MemberList,
  MemberRemoved,
} from '../members/schemas.ts';
import type {
  BillingPlan,
  CheckoutRequest,
  CheckoutSession,
  PortalSession,
  WebhookAck,
} from '../billing/schemas.ts';
import type {
  AccountLimits,
  AccountStatus,
  DowngradePreview,
  DowngradeQuery,
} from '../plans/schemas.ts';
import type { SecretBody } from '../secrets/routes.ts';
import type { TlsPermission, TlsPermissionQuery } from '../domains/tls.ts';
import type { AnalyticsQuery, AppAnalytics } from '../analytics/schemas.ts';
import type { JobRun, RunJobBody } from '../jobs/schemas.ts';
import type {
  CreateDomainBody,
  CreateSlugBody,
  DomainList,
  PatchRouteBody,
  RouteList,
  RouteRecord,
  SlugList,
  VerifyDomainBody,
} from '../domains/schemas.ts';
import type { SecretDeleted, SecretList, SecretSummary } from '../secrets/schemas.ts';
import type {
  EmailConfirmRequest,
  EmailLinkRequest,
  EmailLinkSent,
  PlatformSession,
  SignedIn,
  SignedOut,
  SignupCompleteRequest,
  SignupRequired,
} from '../sign-in/schemas.ts';

export type V0Routes = BindingRoutes & {
  'GET /healthz': Op<Out<typeof HealthResponse>>;
  /** Prometheus's text format */
  'GET /metrics': Op<string>;
  'GET /openapi.json': Op<Record<string, unknown>>;
  'GET /schemas/manifest.v0.json': Op<Record<string, unknown>>;
  // retired password sign-in (410 with a pointer to e-mail links)
  'POST /v0/accounts': Op<never, unknown>;
  'POST /v0/auth/token': Op<never, unknown>;
  'POST /v0/auth/password-reset/request': Op<never, unknown>;
  'POST /v0/auth/password-reset/confirm': Op<never, unknown>;
  'POST /v0/platform/sessions': Op<never, unknown>;
  // sign-in
  'POST /v0/auth/email/request': Op<Out<typeof EmailLinkSent>, In<typeof EmailLinkRequest>>;
  'POST /v0/auth/email/confirm': Op<
    Out<typeof SignedIn> | Out<typeof SignupRequired>,
    In<typeof EmailConfirmRequest>
  >;
  'POST /v0/auth/signup/complete': Op<Out<typeof SignedIn>, In<typeof SignupCompleteRequest>>;
  'GET /v0/platform/session': Op<Out<typeof PlatformSession>>;
  'DELETE /v0/platform/session': Op<Out<typeof SignedOut>>;
  'POST /v0/auth/device/start': Op<Out<typeof DeviceStart>, In<typeof DeviceStartRequest>>;
  'POST /v0/auth/device/poll': Op<Out<typeof DevicePoll>, In<typeof DevicePollRequest>>;
  'GET /v0/auth/device/approval': Op<Out<typeof DeviceApproval>, never, In<typeof ApprovalQuery>>;
  'POST /v0/auth/device/approve': Op<Out<typeof DeviceDecision>, In<typeof DeviceApproveRequest>>;
  'POST /v0/auth/device/deny': Op<Out<typeof DeviceDecision>, In<typeof DeviceDenyRequest>>;
  // accounts, members, keys
  'GET /v0/accounts': Op<Out<typeof AccountList>>;
  'GET /v0/accounts/{account_id}/members': Op<Out<typeof MemberList>>;
  'POST /v0/accounts/{account_id}/members': Op<
    Out<typeof Invitation>,
    In<typeof InviteMemberRequest>
  >;
  'PATCH /v0/accounts/{account_id}/members/{user_id}': Op<
    Out<typeof Member>,
    In<typeof ChangeRoleRequest>
  >;
  'DELETE /v0/accounts/{account_id}/members/{user_id}': Op<Out<typeof MemberRemoved>>;
  'DELETE /v0/accounts/{account_id}/invitations/{invitation_id}': Op<Out<typeof InvitationRevoked>>;
  'GET /v0/accounts/{account_id}/status': Op<Out<typeof AccountStatus>>;
  'GET /v0/accounts/{account_id}/limits': Op<Out<typeof AccountLimits>>;
  'GET /v0/accounts/{account_id}/downgrade-preview': Op<
    Out<typeof DowngradePreview>,
    never,
    In<typeof DowngradeQuery>
  >;
  // billing
  'GET /v0/billing/plan': Op<Out<typeof BillingPlan>>;
  'POST /v0/billing/checkout-session': Op<Out<typeof CheckoutSession>, In<typeof CheckoutRequest>>;
  'POST /v0/billing/portal-session': Op<Out<typeof PortalSession>>;
  'POST /v0/payments/webhook': Op<Out<typeof WebhookAck>, unknown>;
  'POST /v0/stripe/webhook': Op<Out<typeof WebhookAck>, unknown>;
  'GET /v0/auth/api-keys': Op<Out<typeof ApiKeyList>, never, In<typeof ApiKeysQuery>>;
  'POST /v0/auth/api-keys': Op<Out<typeof CreatedApiKey>, In<typeof CreateApiKeyRequest>>;
  'PATCH /v0/auth/api-keys/{api_key_id}': Op<
    Out<typeof ApiKeyMetadata>,
    In<typeof RenameApiKeyRequest>
  >;
  'DELETE /v0/auth/api-keys/{api_key_id}': Op<Out<typeof RevokedApiKey>>;
  // apps
  'GET /v0/apps': Op<Out<typeof AppList>>;
  'PUT /v0/apps': Op<
    Out<typeof PublishAppResponse>,
    In<typeof PublishBody>,
    In<typeof CreateQuery>
  >;
  'GET /v0/apps/{app_id}': Op<Out<typeof AppSummary>>;
  'PUT /v0/apps/{app_id}': Op<
    Out<typeof PublishAppResponse>,
    In<typeof PublishBody>,
    In<typeof PublishQuery>
  >;
  'POST /v0/apps/{app_id}/releases/{release_id}/republish': Op<
    Out<typeof PublishAppResponse>,
    In<typeof RepublishRequest>
  >;
  'POST /v0/apps/{app_id}/releases/{release_id}/make-live': Op<Out<typeof PublishAppResponse>>;
  'POST /v0/apps/{app_id}/releases/{release_id}/preview-link': Op<Out<typeof PreviewLink>>;
  'POST /v0/apps/{app_id}/preview-links/revoke': Op<Out<typeof PreviewLinksRevoked>>;
  'DELETE /v0/apps/{app_id}': Op<Out<typeof UnpublishResponse>>;
  'POST /v0/apps/{app_id}/erase': Op<Out<typeof AppDataErased>, In<typeof EraseAppRequest>>;
  'GET /v0/apps/{app_id}/releases': Op<Out<typeof ReleaseList>>;
  'POST /v0/apps/{app_id}/rollback': Op<Out<typeof RollbackResponse>, In<typeof RollbackRequest>>;
  'GET /v0/apps/{app_id}/resources': Op<Out<typeof ResourceList>>;
  'GET /v0/apps/{app_id}/events': Op<Out<typeof EventPage>, never, In<typeof EventsQuery>>;
  'GET /v0/apps/{app_id}/secrets': Op<Out<typeof SecretList>>;
  'PUT /v0/apps/{app_id}/secrets/{name}': Op<Out<typeof SecretSummary>, In<typeof SecretBody>>;
  'DELETE /v0/apps/{app_id}/secrets/{name}': Op<Out<typeof SecretDeleted>>;
  'POST /v0/apps/{app_id}/admin-invites': Op<
    Out<typeof AdminInviteResponse>,
    In<typeof AdminInviteRequest>
  >;
  'POST /v0/apps/{app_id}/slugs': Op<Out<typeof RouteRecord>, In<typeof CreateSlugBody>>;
  'GET /v0/apps/{app_id}/slugs': Op<Out<typeof SlugList>>;
  'DELETE /v0/apps/{app_id}/slugs/{slug}': Op<Out<typeof RouteRecord>>;
  'GET /v0/apps/{app_id}/routes': Op<Out<typeof RouteList>>;
  'PATCH /v0/apps/{app_id}/routes/{route_id}': Op<
    Out<typeof RouteRecord>,
    In<typeof PatchRouteBody>
  >;
  'POST /v0/apps/{app_id}/domains': Op<Out<typeof RouteRecord>, In<typeof CreateDomainBody>>;
  'GET /v0/apps/{app_id}/domains': Op<Out<typeof DomainList>>;
  'GET /v0/apps/{app_id}/domains/{hostname}': Op<Out<typeof RouteRecord>>;
  'POST /v0/apps/{app_id}/domains/{hostname}/verify': Op<
    Out<typeof RouteRecord>,
    In<typeof VerifyDomainBody>
  >;
  'DELETE /v0/apps/{app_id}/domains/{hostname}': Op<Out<typeof RouteRecord>>;
  'GET /_internal/tls/permission': Op<
    Out<typeof TlsPermission>,
    never,
    In<typeof TlsPermissionQuery>
  >;
  'GET /v0/apps/{app_id}/analytics': Op<Out<typeof AppAnalytics>, never, In<typeof AnalyticsQuery>>;
  'POST /v0/apps/{app_id}/jobs/{job_name}/runs': Op<Out<typeof JobRun>, In<typeof RunJobBody>>;
  // an app's collections (the data browser)
  'GET /v0/apps/{app_id}/data/{collection}': Op<
    Out<typeof DataRowPage>,
    never,
    In<typeof RowsQuery>
  >;
  'POST /v0/apps/{app_id}/data/{collection}': Op<Out<typeof DataRow>, In<typeof RowFields>>;
  'GET /v0/apps/{app_id}/data/{collection}/{row_id}': Op<Out<typeof DataRow>>;
  'PATCH /v0/apps/{app_id}/data/{collection}/{row_id}': Op<
    Out<typeof DataRow>,
    In<typeof RowFields>
  >;
  'DELETE /v0/apps/{app_id}/data/{collection}/{row_id}': Op<Out<typeof DataRowDeleted>>;
  'GET /v0/apps/{app_id}/event-types': Op<Out<typeof EventTypeList>>;
  'GET /v0/apps/{app_id}/event-groups': Op<
    Out<typeof EventGroupList>,
    never,
    Record<string, string>
  >;
  // an app's file stores (the file browser)
  'GET /v0/apps/{app_id}/files/{store}': Op<
    Out<typeof StoredFilePage>,
    never,
    In<typeof FilesQuery>
  >;
  'POST /v0/apps/{app_id}/files/{store}/{file_id}/signed-url': Op<Out<typeof SignedFileUrl>>;
  'DELETE /v0/apps/{app_id}/files/{store}/{file_id}': Op<Out<typeof StoredFileDeleted>>;
  // an app's users
  'GET /v0/apps/{app_id}/app-users': Op<Out<typeof AppUserList>, never, In<typeof AppUsersQuery>>;
  'PATCH /v0/apps/{app_id}/app-users/{user_id}': Op<
    Out<typeof AppUserRecord>,
    In<typeof AppUserChange>
  >;
  'POST /v0/apps/{app_id}/app-users/{user_id}/sign-out': Op<Out<typeof AppUserSignedOut>>;
  'DELETE /v0/apps/{app_id}/app-users/{user_id}': Op<Out<typeof AppUserDeleted>>;
  'GET /v0/apps/{app_id}/invites': Op<Out<typeof PendingInviteList>>;
  'DELETE /v0/apps/{app_id}/invites/{invite_id}': Op<Out<typeof InviteWithdrawn>>;
  // operators (the server's own; 403 for everyone else)
  'GET /v0/operator/accounts': Op<Out<typeof OperatorAccountList>, never, In<typeof AccountsQuery>>;
  'GET /v0/operator/accounts/{account_id}/apps': Op<Out<typeof OperatorAppList>>;
  'PUT /v0/operator/accounts/{account_id}/plan': Op<
    Out<typeof OperatorPlanResult>,
    In<typeof SetPlanRequest>
  >;
  'PUT /v0/operator/accounts/{account_id}/billing-state': Op<
    Out<typeof OperatorBillingStateResult>,
    In<typeof BillingStateRequest>
  >;
  'PUT /v0/operator/accounts/{account_id}/flags/{flag}': Op<
    Out<typeof OperatorFlagResult>,
    In<typeof FlagRequest>
  >;
  'DELETE /v0/operator/accounts/{account_id}/flags/{flag}': Op<Out<typeof OperatorFlagResult>>;
  'PUT /v0/operator/apps/{app_id}/flags/{flag}': Op<
    Out<typeof OperatorFlagResult>,
    In<typeof FlagRequest>
  >;
  'DELETE /v0/operator/apps/{app_id}/flags/{flag}': Op<Out<typeof OperatorFlagResult>>;
  'GET /v0/operator/health': Op<Out<typeof ServerHealth>>;
  'GET /v0/operator/actions': Op<Out<typeof OperatorActionList>, never, In<typeof ActionsQuery>>;
  'GET /v0/operator/operators': Op<Out<typeof OperatorList>>;
  'GET /v0/operator/backups': Op<Out<typeof BackupOverview>>;
  'POST /v0/operator/backups': Op<Out<typeof BackupRunRecord>>;
};
export type Route = keyof V0Routes;
export type ResponseOf<K extends Route> = V0Routes[K]['response'];

/** Every route at run time (the contract test compares them with /openapi.json). */
export const V0_ROUTES = Object.keys({
  'GET /healthz': 1,
  'GET /metrics': 1,
  'GET /openapi.json': 1,
  'GET /schemas/manifest.v0.json': 1,
  'POST /v0/accounts': 1,
  'POST /v0/auth/token': 1,
  'POST /v0/auth/password-reset/request': 1,
  'POST /v0/auth/password-reset/confirm': 1,
  'POST /v0/platform/sessions': 1,
  'POST /v0/auth/email/request': 1,
  'POST /v0/auth/email/confirm': 1,
  'POST /v0/auth/signup/complete': 1,
  'GET /v0/platform/session': 1,
  'DELETE /v0/platform/session': 1,
  'POST /v0/auth/device/start': 1,
  'POST /v0/auth/device/poll': 1,
  'GET /v0/auth/device/approval': 1,
  'POST /v0/auth/device/approve': 1,
  'POST /v0/auth/device/deny': 1,
  'GET /v0/accounts': 1,
  'GET /v0/accounts/{account_id}/members': 1,
  'POST /v0/accounts/{account_id}/members': 1,
  'PATCH /v0/accounts/{account_id}/members/{user_id}': 1,
  'DELETE /v0/accounts/{account_id}/members/{user_id}': 1,
  'DELETE /v0/accounts/{account_id}/invitations/{invitation_id}': 1,
  'GET /v0/accounts/{account_id}/status': 1,
  'GET /v0/accounts/{account_id}/limits': 1,
  'GET /v0/accounts/{account_id}/downgrade-preview': 1,
  'GET /v0/billing/plan': 1,
  'POST /v0/billing/checkout-session': 1,
  'POST /v0/billing/portal-session': 1,
  'POST /v0/payments/webhook': 1,
  'POST /v0/stripe/webhook': 1,
  'GET /v0/auth/api-keys': 1,
  'POST /v0/auth/api-keys': 1,
  'PATCH /v0/auth/api-keys/{api_key_id}': 1,
  'DELETE /v0/auth/api-keys/{api_key_id}': 1,
  'GET /v0/apps': 1,
  'PUT /v0/apps': 1,
  'GET /v0/apps/{app_id}': 1,
  'PUT /v0/apps/{app_id}': 1,
  'POST /v0/apps/{app_id}/releases/{release_id}/republish': 1,
  'POST /v0/apps/{app_id}/releases/{release_id}/make-live': 1,
  'POST /v0/apps/{app_id}/releases/{release_id}/preview-link': 1,
  'POST /v0/apps/{app_id}/preview-links/revoke': 1,
  'DELETE /v0/apps/{app_id}': 1,
  'POST /v0/apps/{app_id}/erase': 1,
  'GET /v0/apps/{app_id}/releases': 1,
  'POST /v0/apps/{app_id}/rollback': 1,
  'GET /v0/apps/{app_id}/resources': 1,
  'GET /v0/apps/{app_id}/events': 1,
  'GET /v0/apps/{app_id}/secrets': 1,
  'PUT /v0/apps/{app_id}/secrets/{name}': 1,
  'DELETE /v0/apps/{app_id}/secrets/{name}': 1,
  'POST /v0/apps/{app_id}/admin-invites': 1,
  'POST /v0/apps/{app_id}/slugs': 1,
  'GET /v0/apps/{app_id}/slugs': 1,
  'DELETE /v0/apps/{app_id}/slugs/{slug}': 1,
  'GET /v0/apps/{app_id}/routes': 1,
  'PATCH /v0/apps/{app_id}/routes/{route_id}': 1,
  'POST /v0/apps/{app_id}/domains': 1,
  'GET /v0/apps/{app_id}/domains': 1,
  'GET /v0/apps/{app_id}/domains/{hostname}': 1,
  'POST /v0/apps/{app_id}/domains/{hostname}/verify': 1,
  'DELETE /v0/apps/{app_id}/domains/{hostname}': 1,
  'GET /_internal/tls/permission': 1,
  'GET /v0/apps/{app_id}/analytics': 1,
  'POST /v0/apps/{app_id}/jobs/{job_name}/runs': 1,
  'GET /v0/apps/{app_id}/data/{collection}': 1,
  'POST /v0/apps/{app_id}/data/{collection}': 1,
  'GET /v0/apps/{app_id}/data/{collection}/{row_id}': 1,
  'PATCH /v0/apps/{app_id}/data/{collection}/{row_id}': 1,
  'DELETE /v0/apps/{app_id}/data/{collection}/{row_id}': 1,
  'GET /v0/apps/{app_id}/event-types': 1,
  'GET /v0/apps/{app_id}/event-groups': 1,
  'GET /v0/apps/{app_id}/files/{store}': 1,
  'POST /v0/apps/{app_id}/files/{store}/{file_id}/signed-url': 1,
  'DELETE /v0/apps/{app_id}/files/{store}/{file_id}': 1,
  ...BINDING_ROUTES,
  'GET /v0/apps/{app_id}/app-users': 1,
  'PATCH /v0/apps/{app_id}/app-users/{user_id}': 1,
  'POST /v0/apps/{app_id}/app-users/{user_id}/sign-out': 1,
  'DELETE /v0/apps/{app_id}/app-users/{user_id}': 1,
  'GET /v0/apps/{app_id}/invites': 1,
  'DELETE /v0/apps/{app_id}/invites/{invite_id}': 1,
  'GET /v0/operator/accounts': 1,
  'GET /v0/operator/accounts/{account_id}/apps': 1,
  'PUT /v0/operator/accounts/{account_id}/plan': 1,
  'PUT /v0/operator/accounts/{account_id}/billing-state': 1,
  'PUT /v0/operator/accounts/{account_id}/flags/{flag}': 1,
  'DELETE /v0/operator/accounts/{account_id}/flags/{flag}': 1,
  'PUT /v0/operator/apps/{app_id}/flags/{flag}': 1,
  'DELETE /v0/operator/apps/{app_id}/flags/{flag}': 1,
  'GET /v0/operator/health': 1,
  'GET /v0/operator/actions': 1,
  'GET /v0/operator/operators': 1,
  'GET /v0/operator/backups': 1,
  'POST /v0/operator/backups': 1,
} satisfies Record<Route, 1>) as Route[];

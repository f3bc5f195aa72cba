/**
 * The one error catalogue, for both planes. Domain code throws `ApiError`s (often made by the
 * `errors.*` factories); the API's handler and the app origin's routes turn them into
 * `{ error: { code, message, details? } }` with the status here, and the sandbox's platform calls
 * hand their code and message to app code.
 */
const STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  unsupported_media_type: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  // contract codes
  account_suspended: 403,
  app_suspended: 403,
  app_takedown: 451,
  route_disabled: 404,
  billing_restricted: 402,
  quota_exceeded: 402,
  plan_limit_exceeded: 402,
  entitlement_required: 402,
  billing_not_configured: 503,
  invalid_billing_plan: 400,
  billing_customer_missing: 409,
  invalid_stripe_signature: 400,
  abuse_throttled: 429,
  downgrade_incompatible: 409,
  domain_pending_verification: 409,
  custom_hostname_provider_conflict: 409,
  custom_hostname_provider_failed: 502,
  // billing (docs/decisions/plans-and-billing.md): Stripe failed or could not be reached
  payment_provider_failed: 502,
  password_auth_disabled: 410,
  password_signup_disabled: 410,
  invalid_bundle: 400,
  invalid_path: 400,
  missing_static_root: 400,
  missing_server_entry: 400,
  bundle_too_large: 413,
  invalid_resource_manifest: 400,
  pending_secrets: 409,
  requires_migration: 409,
  auth_disabled: 409,
  invalid_role: 400,
  invalid_email_auth_token: 400,
  invalid_pending_signup: 400,
  email_already_registered: 409,
  username_taken: 409,
  invalid_device_authorization: 400,
  device_authorization_expired: 400,
  runtime_error: 500,
  // sign-in and team members (docs/decisions/sign-in-and-members.md)
  csrf_rejected: 403,
  last_owner: 409,
  // the app origin: what app code's platform calls and the /_platform routes answer (docs/decisions/origin.md)
  collection_not_declared: 400,
  unknown_field: 400,
  reserved_field: 400,
  invalid_value: 400,
  invalid_query: 400,
  reference_not_found: 400,
  row_too_large: 400,
  unique_violation: 409,
  store_not_declared: 400,
  store_not_public: 400,
  invalid_file: 400,
  file_too_large: 413,
  content_type_not_allowed: 400,
  job_not_declared: 400,
  invalid_delay: 400,
  invalid_invite: 400,
  invalid_verification: 400,
  invalid_credentials: 401,
  not_available: 400,
  // app code's outbound fetch: the request was refused by the guard, aborted, or failed on the way
  fetch_failed: 502,
} as const;

export type ErrorCode = keyof typeof STATUS;
export type ErrorStatus = (typeof STATUS)[ErrorCode];
export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = STATUS[code];
    this.details = details;
  }
  toBody(): ErrorBody {
    return errorBody(this.code, this.message, this.details);
  }
}

export type ErrorBody = { error: { code: string; message: string; details?: ErrorDetails } };

export function errorBody(code: ErrorCode, message: string, details?: ErrorDetails): ErrorBody {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

/** Factories for the errors domain code throws most. */
export const errors = {
  invalid(message: string, details?: ErrorDetails): ApiError {
    return new ApiError('invalid_request', message, details);
  },
  unauthorized(message = 'A valid API key is required (Authorization: Bearer ap_...).'): ApiError {
    return new ApiError('unauthorized', message);
  },
  forbidden(
    message = 'Your role in this account does not allow this operation.',
    details?: ErrorDetails,
  ): ApiError {
    return new ApiError('forbidden', message, details);
  },
  notFound(what = 'Resource'): ApiError {
    return new ApiError('not_found', `${what} not found.`);
  },
  conflict(message: string, details?: ErrorDetails): ApiError {
    return new ApiError('conflict', message, details);
  },
  tooLarge(message = 'Request body is too large.', details?: ErrorDetails): ApiError {
    return new ApiError('payload_too_large', message, details);
  },
  rateLimited(message = 'Too many requests; slow down.', details?: ErrorDetails): ApiError {
    return new ApiError('rate_limited', message, details);
  },
};

import { publicUrl, type Config } from '../config.ts';
import type { AppRow } from './queries.ts';
import type { ReleaseRow } from '../releases/records.ts';
import { previewOrigin } from '../releases/previews.ts';
import type { AppSummary, ReleaseSummary } from './schemas.ts';
import type { ResourceState } from '../manifest/resources.ts';

export function appOrigin(config: Config, appId: string): string {
  return publicUrl(config, `${appId}.${config.hosts.apps}`);
}

/** AppSummary. */
export function toAppSummary(config: Config, app: AppRow): AppSummary {
  return {
    app_id: app.id,
    name: app.name,
    summary: app.summary,
    visibility: app.visibility,
    origin: appOrigin(config, app.id),
    created_at: app.created_at.toISOString(),
    updated_at: app.updated_at.toISOString(),
    deleted_at: app.deleted_at?.toISOString() ?? null,
    live_release_id: app.live_release_id,
    account_id: app.account_id,
  };
}

function activationError(r: ReleaseRow): ReleaseSummary['activation_error'] {
  switch (r.activation_status) {
    case 'pending_secrets':
      return {
        code: 'pending_secrets',
        message: 'Required secrets are missing.',
        missing_secrets: r.missing_secrets,
      };
    case 'requires_migration':
      return {
        code: 'requires_migration',
        message: 'Resource changes need an explicit migration.',
        reasons: r.activation_reasons,
      };
    case 'failed':
      return { code: 'failed', message: 'Activation failed.', reasons: r.activation_reasons };
    default:
      return null;
  }
}

/** ReleaseSummary. */
export function toReleaseSummary(
  config: Config,
  r: ReleaseRow & { created_by_email?: string | null },
  liveReleaseId: string | null,
): ReleaseSummary {
  return {
    release_id: r.id,
    message: r.message,
    created_at: r.created_at.toISOString(),
    activation_status: r.activation_status,
    activation_error: activationError(r),
    is_live: r.id === liveReleaseId,
    // only on previews: the contract's fields stay as they were for every other release
    ...(r.preview ? { preview: true, preview_origin: previewOrigin(config, r.app_id, r.id) } : {}),
    created_by: {
      api_key_id: r.created_by_api_key_id,
      key_prefix: r.created_by_key_prefix,
      ...(r.created_by_email === undefined ? {} : { email: r.created_by_email }),
    },
  };
}

/** Provisioned resource rows as the manifest's resource states. */
export function toStates(
  rows: { resource_type: string; resource_name: string; spec: unknown }[],
): ResourceState[] {
  return rows.map((r) => ({
    resource_type: r.resource_type as ResourceState['resource_type'],
    resource_name: r.resource_name,
    spec: r.spec as Record<string, unknown>,
  }));
}

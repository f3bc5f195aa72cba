import type { Role } from '../db/schema.ts';

export const ROLES: readonly Role[] = ['owner', 'admin', 'developer', 'viewer'];

/**
 * Which platform roles may do what. docs/decisions/foundation.md carries the same matrix as a table; a
 * test checks every cell that has a route. Roles declared in app manifests never appear here.
 */
export const PERMISSIONS = {
  'account.read': ['owner', 'admin', 'developer', 'viewer'],
  'apps.read': ['owner', 'admin', 'developer', 'viewer'],
  'apps.create': ['owner', 'admin', 'developer'],
  'apps.publish': ['owner', 'admin', 'developer'],
  'apps.rollback': ['owner', 'admin', 'developer'],
  'apps.unpublish': ['owner', 'admin'],
  'events.read': ['owner', 'admin', 'developer', 'viewer'],
  'secrets.read': ['owner', 'admin', 'developer', 'viewer'],
  'secrets.write': ['owner', 'admin', 'developer'],
  'invites.create': ['owner', 'admin', 'developer'],
  'routes.write': ['owner', 'admin', 'developer'],
  'jobs.run': ['owner', 'admin', 'developer'],
  'data.read': ['owner', 'admin', 'developer', 'viewer'],
  'data.write': ['owner', 'admin', 'developer'],
  'app_users.read': ['owner', 'admin', 'developer', 'viewer'],
  'app_users.manage': ['owner', 'admin', 'developer'],
  'members.manage': ['owner', 'admin'],
  'billing.manage': ['owner', 'admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof PERMISSIONS;

export function can(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly Role[]).includes(role);
}

/** Permissions that only read: the ones a suspended account or app keeps. */
export function onlyReads(permission: Permission): boolean {
  return permission.endsWith('.read');
}

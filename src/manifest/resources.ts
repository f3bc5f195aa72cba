/**
 * Resources as the platform keeps them: a manifest flattened into `ResourceState`s with every
 * default filled in, the compatibility rules that make provisioning monotonic, and the merge
 * that records what has been provisioned. docs/decisions/publishing.md lists the rules in prose.
 */
import type { Manifest } from './schema.ts';

export type ResourceType = 'auth' | 'data' | 'files' | 'secrets' | 'jobs' | 'webhooks';
export type ResourceState = {
  resource_type: ResourceType;
  resource_name: string;
  spec: Record<string, unknown>;
};

export type FieldSpec = { type: string; values?: string[]; collection?: string };
export type CollectionSpec = {
  fields: Record<string, FieldSpec>;
  indexes: { name: string; fields: string[]; unique: boolean }[];
  access: { read: string; write: string };
};

export const SINGLETON = 'default';

/** Every declared resource with defaults filled in, in a stable order. */
export function flattenResources(m: Manifest): ResourceState[] {
  const r = m.resources;
  const out: ResourceState[] = [];
  if (r.auth) {
    out.push({
      resource_type: 'auth',
      resource_name: SINGLETON,
      spec: {
        mode: r.auth.mode ?? 'none',
        roles: r.auth.roles ?? [],
        public_signup: r.auth.public_signup ?? false,
        email_verification: r.auth.email_verification ?? false,
      },
    });
  }
  for (const [name, c] of Object.entries(r.data?.collections ?? {})) {
    const fields: Record<string, FieldSpec> = {};
    for (const [f, spec] of Object.entries(c.fields))
      fields[f] = typeof spec === 'string' ? { type: spec } : { ...spec };
    const spec: CollectionSpec = {
      fields,
      indexes: (c.indexes ?? []).map((i) => ({
        name: i.name,
        fields: i.fields,
        unique: i.unique ?? false,
      })),
      access: { read: c.access?.read ?? 'server_only', write: c.access?.write ?? 'server_only' },
    };
    out.push({ resource_type: 'data', resource_name: name, spec });
  }
  for (const [name, s] of Object.entries(r.files?.stores ?? {})) {
    out.push({
      resource_type: 'files',
      resource_name: name,
      spec: {
        public: s.public ?? false,
        max_file_size_bytes: s.max_file_size_bytes ?? null,
        allowed_content_types: s.allowed_content_types ?? null,
      },
    });
  }
  if (r.secrets)
    out.push({
      resource_type: 'secrets',
      resource_name: SINGLETON,
      spec: { required: r.secrets.required ?? [] },
    });
  for (const [name, j] of Object.entries(r.jobs ?? {})) {
    const spec: Record<string, unknown> = {
      trigger: j.trigger ?? 'manual',
      max_attempts: j.max_attempts ?? 3,
    };
    if (j.trigger === 'schedule') spec.schedule = j.schedule;
    out.push({ resource_type: 'jobs', resource_name: name, spec });
  }
  for (const [name, w] of Object.entries(r.webhooks ?? {})) {
    const job = w.deliver_to?.startsWith('job:')
      ? w.deliver_to.slice(4)
      : w.deliver_to === 'job'
        ? w.job!
        : null;
    out.push({
      resource_type: 'webhooks',
      resource_name: name,
      spec: {
        provider: w.provider ?? 'none',
        secret: w.secret ?? null,
        deliver_to: job ? 'job' : 'server',
        job,
        path: w.path ?? null,
      },
    });
  }
  return out;
}

export function resourceKey(r: { resource_type: string; resource_name: string }): string {
  return `${r.resource_type}:${r.resource_name}`;
}

function collectionProblems(name: string, before: CollectionSpec, after: CollectionSpec): string[] {
  const reasons: string[] = [];
  for (const [field, old] of Object.entries(before.fields)) {
    const next = after.fields[field];
    if (!next) continue; // a field left out keeps its data; adding it back is checked against `old`
    const where = `collection "${name}" field "${field}"`;
    if (next.type !== old.type) {
      reasons.push(`${where} changes type from ${old.type} to ${next.type}`);
      continue;
    }
    if (old.type === 'enum') {
      const removed = (old.values ?? []).filter((x) => !(next.values ?? []).includes(x));
      if (removed.length)
        reasons.push(
          `${where} drops enum values ${removed.map((x) => JSON.stringify(x)).join(', ')}`,
        );
    }
    if (old.type === 'reference' && old.collection !== next.collection) {
      reasons.push(
        `${where} retargets its reference from "${old.collection}" to "${next.collection}"`,
      );
    }
  }
  // a unique index new to the rows is checked against them when the release goes live (data/rebuild.ts)
  return reasons;
}

/**
 * Why `next` cannot be activated over what is provisioned (empty when compatible). Only changes
 * that would break or reinterpret stored data count; adding resources, fields, roles is fine.
 */
export function incompatibilities(provisioned: ResourceState[], next: ResourceState[]): string[] {
  const have = new Map(provisioned.map((r) => [resourceKey(r), r]));
  const reasons: string[] = [];
  for (const r of next) {
    const old = have.get(resourceKey(r));
    if (!old) continue;
    const a = old.spec;
    const b = r.spec;
    switch (r.resource_type) {
      case 'auth': {
        if (a.mode === 'app_users' && b.mode !== 'app_users')
          reasons.push(
            'auth mode changes from app_users to none, which would strand existing app users',
          );
        const dropped = (a.roles as string[]).filter((x) => !(b.roles as string[]).includes(x));
        if (dropped.length)
          reasons.push(`auth drops roles ${dropped.join(', ')}, which app users may hold`);
        break;
      }
      case 'data':
        reasons.push(
          ...collectionProblems(r.resource_name, a as CollectionSpec, b as CollectionSpec),
        );
        break;
      case 'files':
        if (a.public !== b.public)
          reasons.push(
            `file store "${r.resource_name}" switches from ${a.public ? 'public' : 'private'} to ${b.public ? 'public' : 'private'}`,
          );
        break;
      case 'jobs':
        if (a.trigger !== b.trigger)
          reasons.push(
            `job "${r.resource_name}" changes its trigger from ${a.trigger} to ${b.trigger}`,
          );
        break;
      default:
        break;
    }
  }
  return reasons;
}

/** What is recorded as provisioned after `next` goes live: collections keep fields and indexes they had. */
export function mergeProvisioned(
  old: ResourceState | undefined,
  next: ResourceState,
): ResourceState {
  if (!old || next.resource_type !== 'data') return next;
  const a = old.spec as CollectionSpec;
  const b = next.spec as CollectionSpec;
  const indexes = [
    ...b.indexes,
    ...a.indexes.filter((i) => !b.indexes.some((j) => j.name === i.name)),
  ];
  return { ...next, spec: { fields: { ...a.fields, ...b.fields }, indexes, access: b.access } };
}

/** JSON with object keys sorted (jsonb does not keep key order). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function sameSpec(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

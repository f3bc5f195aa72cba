/**
 * valibot schemas mirroring the contract's "Publish request body" tables. Every object the
 * contract closes is strict (unknown keys refused). Cross-references between resources are
 * checked in validate.ts, which also assigns the contract's error codes.
 */
import { RELEASE_LIMITS } from './limits.ts';
import * as v from 'valibot';
import { component } from '../openapi/components.ts';

export const RESERVED_RESOURCE_NAMES = [
  '_platform',
  'system',
  'auth',
  'session',
  'sessions',
  'secrets',
  'runtime',
];
export const RESERVED_ROLE_NAMES = ['system', 'platform'];
export const RESERVED_FIELD_NAMES = ['id', 'created_at', 'updated_at', 'deleted_at', 'data'];
/** The platform's own prefix and two infrastructure providers' (docs/decisions/publishing.md). */
export const RESERVED_SECRET_PREFIXES = ['PLATFORM_', 'AWS_', 'CLOUDFLARE_'];

const notIn = (list: string[], what: string) =>
  v.check((s: string) => !list.includes(s), `must not be a reserved ${what} (${list.join(', ')})`);

export const ResourceName = v.pipe(
  v.string(),
  v.regex(
    /^[a-z][a-z0-9-]{0,63}$/,
    'must start with a lowercase letter, then lowercase letters, digits or hyphens, 1 to 64 characters',
  ),
  notIn(RESERVED_RESOURCE_NAMES, 'name'),
);
export const RoleName = v.pipe(
  v.string(),
  v.regex(
    /^[a-z][a-z0-9-]{0,63}$/,
    'must start with a lowercase letter, then lowercase letters, digits or hyphens, 1 to 64 characters',
  ),
  notIn(RESERVED_ROLE_NAMES, 'role name'),
);
export const FieldName = v.pipe(
  v.string(),
  v.regex(
    /^[a-z][a-z0-9_]{0,63}$/,
    'must start with a lowercase letter, then lowercase letters, digits or underscores, 1 to 64 characters',
  ),
  notIn(RESERVED_FIELD_NAMES, 'field name'),
);
export const SecretName = v.pipe(
  v.string(),
  v.regex(
    /^[A-Z][A-Z0-9_]{0,63}$/,
    'must start with an uppercase letter, then uppercase letters, digits or underscores, 1 to 64 characters',
  ),
  v.check(
    (s: string) => !RESERVED_SECRET_PREFIXES.some((p) => s.startsWith(p)),
    `must not start with ${RESERVED_SECRET_PREFIXES.join(', ')}`,
  ),
);

/** Why a release path is invalid, or undefined when it is fine. */
export function pathProblem(p: string): string | undefined {
  if (p.length < 1 || p.length > 512) return 'must be 1 to 512 characters';
  if (p.startsWith('/')) return 'must be relative (no leading slash)';
  if (p.includes('\\')) return 'must not contain a backslash';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(p)) return 'must not contain control characters';
  const segments = p.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    return 'must not have empty, "." or ".." segments';
  if (segments[0] === '_platform') return 'must not be under the reserved _platform/ prefix';
  return undefined;
}
/**
 * The release-path rule as a JSON Schema pattern, for the documents generated from these schemas
 * (valibot checks it in code, in `ReleasePath`): relative, no backslash, no empty, `.` or `..`
 * segment, not under `_platform/`.
 */
export const RELEASE_PATH_PATTERN = String.raw`^(?!/)(?!_platform(?:/|$))(?!.*\\)(?!.*//)(?!.*/$)(?!(?:.*/)?\.\.?(?:/|$)).{1,512}$`;

export const PATH_ISSUE = 'invalid path: ';
export const ReleasePath = v.pipe(
  v.string(),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = pathProblem(dataset.value as string);
    if (problem) addIssue({ message: PATH_ISSUE + problem });
  }),
);

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const CONTENT_TYPE = new RegExp(
  `^${TOKEN}/${TOKEN}(?:\\s*;\\s*${TOKEN}=(?:${TOKEN}|"(?:[^"\\\\\\r\\n]|\\\\.)*"))*$`,
);
export const ContentType = v.pipe(
  v.string(),
  v.minLength(1, 'must be 1 to 255 characters'),
  v.maxLength(255, 'must be 1 to 255 characters'),
  v.regex(CONTENT_TYPE, 'must be type/subtype with optional ; name=value parameters'),
);

const unique = <T>(what: string) =>
  v.check((items: T[]) => new Set(items).size === items.length, `must not repeat ${what}`);

export const AppManifest = component(
  'AppManifest',
  v.strictObject({
    name: v.pipe(
      v.string(),
      v.minLength(1, 'must be 1 to 120 characters'),
      v.maxLength(120, 'must be 1 to 120 characters'),
    ),
    summary: v.optional(v.pipe(v.string(), v.maxLength(1000, 'must be at most 1000 characters'))),
    visibility: v.optional(v.picklist(['public', 'private'], 'must be public or private')),
    tags: v.optional(
      v.pipe(v.array(ResourceName), v.maxLength(32, 'at most 32 tags'), unique<string>('tags')),
    ),
  }),
);

export const RuntimeManifest = component(
  'RuntimeManifest',
  v.strictObject({
    static_root: ReleasePath,
    server_entry: v.optional(ReleasePath),
    fallback: v.optional(
      v.picklist(['server', 'index.html', '404'], 'must be server, index.html or 404'),
    ),
  }),
);

export const FIELD_TYPES = [
  'string',
  'integer',
  'number',
  'boolean',
  'datetime',
  'json',
  'richtext',
  'enum',
  'reference',
] as const;
const PLAIN_TYPES = [
  'string',
  'integer',
  'number',
  'boolean',
  'datetime',
  'json',
  'richtext',
] as const;

export const DataFieldSpec = component(
  'DataFieldSpec',
  v.union(
    [
      v.picklist(PLAIN_TYPES),
      v.strictObject({ type: v.picklist(PLAIN_TYPES) }),
      v.strictObject({
        type: v.literal('enum'),
        values: v.pipe(
          v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
          v.minLength(1, 'needs at least one value'),
          unique<string>('values'),
        ),
      }),
      v.strictObject({ type: v.literal('reference'), collection: ResourceName }),
    ],
    'must be a type name (string, integer, number, boolean, datetime, json, richtext), {type: "enum", values: [...]} or {type: "reference", collection}',
  ),
);

export const AccessRule = v.union(
  [
    v.picklist(['server_only', 'authenticated', 'owner', 'public']),
    v.pipe(v.string(), v.regex(/^role:[a-z][a-z0-9-]{0,63}$/)),
  ],
  'must be server_only, authenticated, owner, public or role:<role_name>',
);

export const DataIndexSpec = component(
  'DataIndexSpec',
  v.strictObject({
    name: FieldName,
    fields: v.pipe(
      v.array(FieldName),
      v.minLength(1, 'needs at least one field'),
      unique<string>('fields'),
    ),
    unique: v.optional(v.boolean()),
  }),
);

export const DataCollectionSpec = component(
  'DataCollectionSpec',
  v.strictObject({
    fields: v.pipe(
      v.record(FieldName, DataFieldSpec),
      v.check((o) => Object.keys(o).length <= 200, 'at most 200 fields'),
    ),
    indexes: v.optional(v.pipe(v.array(DataIndexSpec), v.maxLength(32, 'at most 32 indexes'))),
    access: v.optional(
      v.strictObject({ read: v.optional(AccessRule), write: v.optional(AccessRule) }),
    ),
  }),
);

export const FileStoreSpec = component(
  'FileStoreSpec',
  v.strictObject({
    public: v.optional(v.boolean()),
    max_file_size_bytes: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1, 'must be at least 1')),
    ),
    allowed_content_types: v.optional(
      v.pipe(v.array(ContentType), unique<string>('content types')),
    ),
  }),
);

const MaxAttempts = v.optional(
  v.pipe(
    v.number(),
    v.integer('must be an integer'),
    v.minValue(1, 'must be 1 to 10'),
    v.maxValue(10, 'must be 1 to 10'),
  ),
);
export const SCHEDULES = ['every_15_minutes', 'hourly', 'daily'] as const;
export const JobSpec = component(
  'JobSpec',
  v.union(
    [
      v.strictObject({ trigger: v.optional(v.literal('manual')), max_attempts: MaxAttempts }),
      v.strictObject({
        trigger: v.literal('schedule'),
        schedule: v.picklist(SCHEDULES),
        max_attempts: MaxAttempts,
      }),
    ],
    'must be {trigger: "manual", max_attempts?} or {trigger: "schedule", schedule: every_15_minutes|hourly|daily, max_attempts?}',
  ),
);

export const WebhookSpec = component(
  'WebhookSpec',
  v.pipe(
    v.strictObject({
      provider: v.optional(
        v.picklist(
          ['none', 'generic_hmac', 'code_host'],
          'must be none, generic_hmac or code_host',
        ),
      ),
      secret: v.optional(SecretName),
      deliver_to: v.optional(
        v.union(
          [
            v.picklist(['server', 'job']),
            v.pipe(v.string(), v.regex(/^job:[a-z][a-z0-9-]{0,63}$/)),
          ],
          'must be server, job or job:<job_name>',
        ),
      ),
      job: v.optional(ResourceName),
      path: v.optional(ReleasePath),
    }),
    v.forward(
      v.check(
        (w) => (w.provider ?? 'none') === 'none' || w.secret !== undefined,
        'is required when provider is generic_hmac or code_host',
      ),
      ['secret'],
    ),
    v.forward(
      v.check(
        (w) => w.deliver_to !== 'job' || w.job !== undefined,
        'is required when deliver_to is job',
      ),
      ['job'],
    ),
    v.forward(
      v.check(
        (w) => w.job === undefined || w.deliver_to === 'job',
        'is only allowed with deliver_to: job',
      ),
      ['job'],
    ),
  ),
);

export const ResourceManifest = component(
  'ResourceManifest',
  v.strictObject({
    auth: v.optional(
      v.strictObject({
        mode: v.optional(v.picklist(['none', 'app_users'], 'must be none or app_users')),
        roles: v.optional(v.pipe(v.array(RoleName), unique<string>('roles'))),
        public_signup: v.optional(v.boolean()),
        email_verification: v.optional(v.boolean()),
      }),
    ),
    data: v.optional(
      v.strictObject({ collections: v.optional(v.record(ResourceName, DataCollectionSpec)) }),
    ),
    files: v.optional(
      v.strictObject({ stores: v.optional(v.record(ResourceName, FileStoreSpec)) }),
    ),
    secrets: v.optional(
      v.strictObject({
        required: v.optional(v.pipe(v.array(SecretName), unique<string>('secret names'))),
      }),
    ),
    jobs: v.optional(v.record(ResourceName, JobSpec)),
    webhooks: v.optional(v.record(ResourceName, WebhookSpec)),
  }),
);

export const ReleaseFileInput = component(
  'ReleaseFileInput',
  v.strictObject({
    path: ReleasePath,
    content_type: ContentType,
    content_base64: v.string(),
  }),
);

export const PublishBody = component(
  'PublishRequest',
  v.strictObject({
    app: AppManifest,
    runtime: RuntimeManifest,
    resources: v.optional(ResourceManifest),
    files: v.pipe(
      v.array(ReleaseFileInput),
      v.minLength(1, `must have 1 to ${RELEASE_LIMITS.files} files`),
      v.maxLength(RELEASE_LIMITS.files, `must have 1 to ${RELEASE_LIMITS.files} files`),
    ),
    message: v.optional(
      v.pipe(v.string(), v.maxLength(10_000, 'must be at most 10000 characters')),
    ),
    provenance: v.optional(
      v.pipe(
        v.record(v.string(), v.unknown()),
        v.check((o) => JSON.stringify(o).length <= 16_384, 'must be at most 16 KiB as JSON'),
      ),
    ),
  }),
);

export type PublishInput = v.InferOutput<typeof PublishBody>;
export type ResourceManifestInput = v.InferOutput<typeof ResourceManifest>;
export type Manifest = {
  app: PublishInput['app'];
  runtime: PublishInput['runtime'];
  resources: ResourceManifestInput;
};

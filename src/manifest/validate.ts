/**
 * Publish-body validation with the contract's codes: bundle_too_large (413), invalid_bundle,
 * invalid_path, missing_static_root, missing_server_entry, invalid_resource_manifest, and
 * invalid_request for the rest. Nothing here touches the database.
 */
import { fieldMap } from '../lib/json.ts';
import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { ApiError, type ErrorCode } from '../errors.ts';
import { PATH_ISSUE, PublishBody, type Manifest, type PublishInput } from './schema.ts';

import { mib, RELEASE_LIMITS as LIMITS } from './limits.ts';
import { BINDINGS_PATH, type Bindings, NO_BINDINGS, parseBindings } from '../bindings/declared.ts';
/** Largest publish body we read: the base64 of 100 MiB plus room for paths and manifest. */
export const MAX_PUBLISH_BODY_BYTES = Math.ceil((LIMITS.totalBytes * 4) / 3) + 8 * 1024 * 1024;

export type DecodedFile = { path: string; content_type: string; bytes: Buffer; sha256: Buffer };
export type ValidBundle = {
  manifest: Manifest;
  /** what `.platform/bindings.json` declares (src/bindings/declared.ts) */
  bindings: Bindings;
  files: DecodedFile[];
  message: string | null;
  provenance: Record<string, unknown> | null;
};

const PRIORITY: ErrorCode[] = [
  'invalid_bundle',
  'invalid_path',
  'invalid_resource_manifest',
  'invalid_request',
];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function tooLarge(message: string, details: Record<string, unknown>): ApiError {
  return new ApiError('bundle_too_large', message, details);
}

function decodedLength(b64: string): number {
  const pad = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  return Math.floor((b64.length * 3) / 4) - pad;
}

/** Limits checked before anything is decoded, so an oversized bundle costs no more memory. */
function checkSizes(body: unknown): void {
  const files = (body as { files?: unknown })?.files;
  if (!Array.isArray(files)) return;
  if (files.length > LIMITS.files)
    throw tooLarge(`A release has at most ${LIMITS.files} files; this one has ${files.length}.`, {
      limit: LIMITS.files,
      files: files.length,
    });
  let total = 0;
  files.forEach((f, i) => {
    const b64 = (f as { content_base64?: unknown })?.content_base64;
    if (typeof b64 !== 'string') return;
    const size = decodedLength(b64);
    if (size > LIMITS.fileBytes) {
      throw tooLarge(
        `File ${JSON.stringify((f as { path?: unknown }).path)} is larger than ${mib(LIMITS.fileBytes)}.`,
        { limit_bytes: LIMITS.fileBytes, index: i, size_bytes: size },
      );
    }
    total += size;
  });
  if (total > LIMITS.totalBytes)
    throw tooLarge(`The files add up to more than ${mib(LIMITS.totalBytes)}.`, {
      limit_bytes: LIMITS.totalBytes,
      total_bytes: total,
    });
}

function categorize(issue: v.BaseIssue<unknown>): ErrorCode {
  const keys = issue.path?.map((p) => String(p.key)) ?? [];
  const isPath = issue.message.startsWith(PATH_ISSUE);
  if (keys[0] === 'files') {
    if (keys.length >= 3 && keys[2] === 'path' && isPath) return 'invalid_path';
    return 'invalid_bundle';
  }
  if (keys[0] === 'runtime' && isPath) return 'invalid_path';
  if (keys[0] === 'resources') return 'invalid_resource_manifest';
  return 'invalid_request';
}

function fail(code: ErrorCode, message: string, fields: Record<string, string[]>): never {
  throw new ApiError(code, message, { fields });
}

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  invalid_bundle: 'The bundle is invalid.',
  invalid_path: 'A release path is invalid.',
  invalid_resource_manifest: 'The resource declarations are invalid.',
  invalid_request: 'The publish request is invalid.',
};

/** Cross-references between declared resources; returns problems keyed by field path. */
function resourceProblems(m: Manifest): Record<string, string[]> {
  const problems = fieldMap<string[]>();
  const add = (key: string, msg: string) => (problems[key] ??= []).push(msg);
  const r = m.resources;
  const collections = r.data?.collections ?? {};
  const roles = new Set(r.auth?.roles ?? []);
  const appUsers = (r.auth?.mode ?? 'none') === 'app_users';
  const jobs = r.jobs ?? {};
  const requiredSecrets = new Set(r.secrets?.required ?? []);
  for (const [name, c] of Object.entries(collections)) {
    const base = `resources.data.collections.${name}`;
    for (const [field, spec] of Object.entries(c.fields)) {
      if (
        typeof spec === 'object' &&
        spec.type === 'reference' &&
        !(spec.collection in collections)
      ) {
        add(
          `${base}.fields.${field}.collection`,
          `names collection "${spec.collection}", which is not declared`,
        );
      }
    }
    const indexNames = new Set<string>();
    (c.indexes ?? []).forEach((index, i) => {
      if (indexNames.has(index.name))
        add(`${base}.indexes.${i}.name`, `repeats index name "${index.name}"`);
      indexNames.add(index.name);
      for (const f of index.fields)
        if (!(f in c.fields))
          add(`${base}.indexes.${i}.fields`, `names field "${f}", which is not declared`);
    });
    for (const which of ['read', 'write'] as const) {
      const rule = c.access?.[which];
      if (!rule || rule === 'public' || rule === 'server_only') continue;
      if (!appUsers)
        add(`${base}.access.${which}`, `"${rule}" needs resources.auth.mode "app_users"`);
      if (rule.startsWith('role:') && !roles.has(rule.slice(5)))
        add(
          `${base}.access.${which}`,
          `names role "${rule.slice(5)}", which is not declared in resources.auth.roles`,
        );
    }
  }
  for (const [name, w] of Object.entries(r.webhooks ?? {})) {
    const base = `resources.webhooks.${name}`;
    const job = w.deliver_to?.startsWith('job:')
      ? w.deliver_to.slice(4)
      : w.deliver_to === 'job'
        ? w.job
        : undefined;
    if (job !== undefined && !(job in jobs))
      add(
        `${base}.${w.deliver_to === 'job' ? 'job' : 'deliver_to'}`,
        `names job "${job}", which is not declared in resources.jobs`,
      );
    if ((w.provider ?? 'none') !== 'none' && w.secret && !requiredSecrets.has(w.secret)) {
      add(
        `${base}.secret`,
        `names secret "${w.secret}", which must be listed in resources.secrets.required`,
      );
    }
    if (w.secret && (w.provider ?? 'none') === 'none' && !requiredSecrets.has(w.secret)) {
      add(
        `${base}.secret`,
        `names secret "${w.secret}", which must be listed in resources.secrets.required`,
      );
    }
  }
  return problems;
}

/** Validates a parsed publish body; throws an ApiError with the contract's code on the first class of problem. */
export function validateBundle(body: unknown): ValidBundle {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    fail('invalid_request', 'The publish body must be a JSON object.', {
      '(root)': ['must be an object'],
    });
  checkSizes(body);
  const parsed = v.safeParse(PublishBody, body);
  if (!parsed.success) {
    const fields = fieldMap<string[]>();
    let code: ErrorCode = 'invalid_request';
    for (const issue of parsed.issues) {
      const key = issue.path?.map((p) => String(p.key)).join('.') || '(root)';
      (fields[key] ??= []).push(issue.message);
      const c = categorize(issue);
      if (PRIORITY.indexOf(c) < PRIORITY.indexOf(code)) code = c;
    }
    fail(code, MESSAGES[code]!, fields);
  }
  const input: PublishInput = parsed.output;

  const seen = new Set<string>();
  const files: DecodedFile[] = [];
  let total = 0;
  input.files.forEach((f, i) => {
    if (seen.has(f.path))
      fail('invalid_bundle', `The path ${f.path} appears more than once.`, {
        [`files.${i}.path`]: ['repeats an earlier path'],
      });
    seen.add(f.path);
    if (f.content_base64.length % 4 !== 0 || !BASE64.test(f.content_base64)) {
      fail('invalid_bundle', `files[${i}].content_base64 is not valid base64.`, {
        [`files.${i}.content_base64`]: ['must be standard base64 (A-Z a-z 0-9 + /, = padding)'],
      });
    }
    const bytes = Buffer.from(f.content_base64, 'base64');
    total += bytes.length;
    files.push({
      path: f.path,
      content_type: f.content_type,
      bytes,
      sha256: createHash('sha256').update(bytes).digest(),
    });
  });
  if (total > LIMITS.totalBytes)
    throw tooLarge(`The files add up to more than ${mib(LIMITS.totalBytes)}.`, {
      limit_bytes: LIMITS.totalBytes,
      total_bytes: total,
    });

  const { runtime } = input;
  const root = runtime.static_root;
  if (!input.files.some((f) => f.path === root || f.path.startsWith(`${root}/`))) {
    fail('missing_static_root', `runtime.static_root "${root}" matches no release file.`, {
      'runtime.static_root': [`no file is ${root} or under ${root}/`],
    });
  }
  if ((runtime.fallback ?? '404') === 'server' && runtime.server_entry === undefined) {
    fail(
      'missing_server_entry',
      'runtime.server_entry is required when runtime.fallback is "server".',
      { 'runtime.server_entry': ['is required when fallback is server'] },
    );
  }
  if (runtime.server_entry !== undefined && !seen.has(runtime.server_entry)) {
    fail(
      'missing_server_entry',
      `runtime.server_entry "${runtime.server_entry}" matches no release file.`,
      { 'runtime.server_entry': ['names no release file'] },
    );
  }
  const manifest: Manifest = {
    app: input.app,
    runtime: input.runtime,
    resources: input.resources ?? {},
  };
  const problems = resourceProblems(manifest);
  if (Object.keys(problems).length)
    fail('invalid_resource_manifest', MESSAGES.invalid_resource_manifest!, problems);
  let bindings = NO_BINDINGS;
  const declared = files.findIndex((f) => f.path === BINDINGS_PATH);
  if (declared >= 0) {
    const parsed = parseBindings(files[declared]!.bytes.toString('utf8'));
    if (!parsed.ok)
      fail(
        'invalid_resource_manifest',
        `${BINDINGS_PATH} is not a bindings file: ${parsed.problems[0]}`,
        {
          [`files.${declared}`]: parsed.problems,
        },
      );
    else bindings = parsed.bindings;
  }
  return {
    manifest,
    bindings,
    files,
    message: input.message ?? null,
    provenance: (input.provenance as Record<string, unknown> | undefined) ?? null,
  };
}

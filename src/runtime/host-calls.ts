import type { Deps } from '../deps.ts';
import { createRow, deleteRow, getRow, updateRow } from '../data/service.ts';
import { listRows } from '../data/list.ts';
import { ApiError } from '../errors.ts';
import { lookupId } from '../lib/text.ts';
import { createSignedUrl, createUpload, deleteFile } from '../files/service.ts';
import { enqueueFromApp, type JobTarget } from '../jobs/enqueue.ts';
import type { HostCallHandler, HostUpload } from '../sandbox/pool.ts';
import type { HttpCache } from './http-cache.ts';
import { sharesOf } from '../db/fair-share.ts';
import { bindingCall, isBindingCall } from '../bindings/host-calls.ts';
import { NO_BINDINGS, type Bindings } from '../bindings/declared.ts';
import { planOf, upgradeFor } from '../plans/catalogue.ts';

/** What reads the release's static files for `ctx.assets.fetch` (path, method). */
export type AssetReader = (pathname: unknown, method: unknown) => Promise<unknown>;

/** The asynchronous platform calls app code may make, bound to one app, release and request. */
export function hostCallsFor(
  deps: Deps,
  target: JobTarget,
  assets?: AssetReader,
  cache?: HttpCache['api'],
  /** the end of the server call's wall-clock limit (performance.now()): waiting for a turn counts in it */
  deadline = Number.POSITIVE_INFINITY,
  bindings: Bindings = NO_BINDINGS,
): HostCallHandler {
  const calls = dispatch(deps, target, assets, cache, bindings);
  const shares = sharesOf(deps.pool);
  return async (method, args, upload) => {
    let done: (() => void) | undefined;
    try {
      // the shared cache lives in memory; every other call reaches Postgres (and the blob store)
      if (!method.startsWith('cache.'))
        done = await shares.acquire(target.appId, target.accountId, deadline);
      return await calls(method, args, upload);
    } catch (err) {
      // Only the platform's own, deliberate errors reach app code; anything else (a database
      // error, a bug) is logged for the operator and becomes a generic error.
      if (err instanceof ApiError) throw err;
      deps.log.error('platform call failed', {
        method,
        app_id: target.appId,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      });
      throw new ApiError('internal_error', 'The platform could not complete this call; try again.');
    } finally {
      done?.();
    }
  };
}

/** The collection name app code passed: a string, or the same error an undeclared one gets. */
function collectionArg(name: unknown): string {
  if (typeof name !== 'string')
    throw new ApiError('collection_not_declared', 'A collection name must be a string.');
  return name;
}

/** A cache name and URL from app code (the Cache API): bounded strings, an http(s) URL. */
function cacheArgs(name: unknown, url: unknown): { name: string; url: string } {
  if (typeof name !== 'string' || name.length > 256)
    throw new ApiError('invalid_request', 'A cache name is a string of at most 256 characters.');
  if (
    typeof url !== 'string' ||
    url.length > 8192 ||
    !/^https?:\/\//i.test(url) ||
    !URL.canParse(url)
  )
    throw new ApiError(
      'invalid_request',
      'A cached request needs an http(s) URL of at most 8 KiB.',
    );
  return { name, url };
}

/** Header pairs from app code, as Headers (invalid ones refused, as the Headers constructor refuses them). */
function headersArg(pairs: unknown): Headers {
  if (!Array.isArray(pairs)) return new Headers();
  try {
    return new Headers(
      pairs
        .filter((p) => Array.isArray(p) && p.length === 2)
        .map((p): [string, string] => [String(p[0]), String(p[1])]),
    );
  } catch {
    throw new ApiError('invalid_request', 'Invalid header.');
  }
}

async function cacheCall(
  cache: HttpCache['api'] | undefined,
  target: JobTarget,
  method: string,
  args: unknown[],
  upload: HostUpload | undefined,
): Promise<unknown> {
  if (!cache) throw new ApiError('not_available', 'caches is not available here');
  const { name, url } = cacheArgs(args[0], args[1]);
  if (method === 'cache.delete') return cache.delete(target.appId, name, url);
  const reqHeaders = headersArg(args[2]);
  if (method === 'cache.put') {
    const status = Number(args[3]);
    if (!Number.isInteger(status) || status < 200 || status > 599)
      throw new ApiError('invalid_request', 'A cached response needs a status from 200 to 599.');
    return cache.put(
      { appId: target.appId, accountId: target.accountId },
      name,
      url,
      reqHeaders,
      status,
      headersArg(args[4]),
      upload?.bytes ?? Buffer.alloc(0),
    );
  }
  const req = new Request(url, { headers: reqHeaders });
  const res = cache.match(target.appId, name, req, reqHeaders, target.requestId ?? '');
  if (!res) return null;
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: [...res.headers], base64: bytes.toString('base64') };
}

/** One more binding operation of this call: past the plan's `bindings.operations.max`, Workers' refusal. */
function countOperation(deps: Deps, planKey: string, n: number): void {
  const plan = planOf(deps.config.plans, planKey);
  const limit = plan.limits['bindings.operations.max'];
  if (n <= limit) return;
  throw new ApiError('quota_exceeded', 'Too many API requests by single Worker invocation.', {
    metric: 'bindings.operations',
    plan_key: plan.key,
    limit,
    current: n - 1,
    increment: 1,
    upgrade_required: upgradeFor(deps.config.plans, plan, 'bindings.operations.max') !== null,
  });
}

function dispatch(
  deps: Deps,
  target: JobTarget,
  assets?: AssetReader,
  cache?: HttpCache['api'],
  bindings: Bindings = NO_BINDINGS,
): HostCallHandler {
  const planKey = target.planKey ?? 'free';
  const bound = { appId: target.appId, accountId: target.accountId, bindings, planKey };
  let operations = 0;
  return async (method, args, upload) => {
    if (isBindingCall(method)) {
      countOperation(deps, planKey, ++operations);
      return bindingCall(deps, bound, method, args, upload);
    }
    switch (method) {
      case 'cache.match':
      case 'cache.put':
      case 'cache.delete':
        return cacheCall(cache, target, method, args, upload);
      case 'assets.fetch':
        if (!assets) throw new ApiError('not_available', 'ctx.assets is not available here');
        return assets(args[0], args[1]);
      case 'jobs.enqueue':
        return enqueueFromApp(deps, target, args[0], args[1], args[2]);
      case 'data.create':
        return createRow(deps, target, collectionArg(args[0]), args[1]);
      case 'data.update':
        if (typeof args[1] !== 'string')
          throw new ApiError('not_found', 'A row id must be a string.');
        return updateRow(deps, target, collectionArg(args[0]), lookupId(args[1]), args[2]);
      case 'data.get':
        return getRow(deps, target, collectionArg(args[0]), lookupId(args[1]));
      case 'data.delete':
        return deleteRow(deps, target, collectionArg(args[0]), lookupId(args[1]));
      case 'data.list':
        return listRows(deps, target, collectionArg(args[0]), args[1]);
      case 'files.upload':
        return createUpload(deps, target, args[0], upload, args[1]);
      case 'files.signedUrl':
        return createSignedUrl(deps, target, args[0], args[1], args[2]);
      case 'files.delete':
        return deleteFile(deps, target, args[0], args[1]);
      default:
        throw new ApiError('not_available', `${method} is not available`);
    }
  };
}

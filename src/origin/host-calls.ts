import type { Deps } from '../deps.ts';
import { createRow, deleteRow, getRow, listRows, updateRow } from '../data/service.ts';
import { ApiError } from '../errors.ts';
import { lookupId } from '../lib/text.ts';
import { createSignedUrl, createUpload, deleteFile } from '../files/service.ts';
import { enqueueFromApp, type JobTarget } from '../jobs/enqueue.ts';
import type { HostCallHandler } from '../sandbox/pool.ts';

/** What reads the release's static files for `ctx.assets.fetch` (path, method). */
export type AssetReader = (pathname: unknown, method: unknown) => Promise<unknown>;

/** The asynchronous platform calls app code may make, bound to one app, release and request. */
export function hostCallsFor(deps: Deps, target: JobTarget, assets?: AssetReader): HostCallHandler {
  const calls = dispatch(deps, target, assets);
  return async (method, args, upload) => {
    try {
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
    }
  };
}

/** The collection name app code passed: a string, or the same error an undeclared one gets. */
function collectionArg(name: unknown): string {
  if (typeof name !== 'string')
    throw new ApiError('collection_not_declared', 'A collection name must be a string.');
  return name;
}

function dispatch(deps: Deps, target: JobTarget, assets?: AssetReader): HostCallHandler {
  return async (method, args, upload) => {
    switch (method) {
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

import type { Deps } from '../deps.ts';
import { createRow, deleteRow, getRow, listRows, updateRow } from '../data/service.ts';
import { ApiError } from '../errors.ts';
import { createSignedUrl, createUpload, deleteFile } from '../files/service.ts';
import { enqueueFromApp, type JobTarget } from '../jobs/enqueue.ts';
import type { HostCallHandler } from './sandbox/pool.ts';

/** The asynchronous platform calls app code may make, bound to one app, release and request. */
export function hostCallsFor(deps: Deps, target: JobTarget): HostCallHandler {
  const calls = dispatch(deps, target);
  return async (method, args) => {
    try {
      return await calls(method, args);
    } catch (err) {
      // Only the platform's own, deliberate errors reach app code; anything else (a database
      // error, a bug) is logged for the operator and becomes a generic error.
      if (err instanceof ApiError) throw err;
      deps.log.error('platform call failed', { method, app_id: target.appId, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      throw new ApiError('internal_error', 'The platform could not complete this call; try again.');
    }
  };
}

function dispatch(deps: Deps, target: JobTarget): HostCallHandler {
  return async (method, args) => {
    switch (method) {
      case 'jobs.enqueue':
        return enqueueFromApp(deps, target, args);
      case 'data.create':
        return createRow(deps, target, args);
      case 'data.update':
        return updateRow(deps, target, args);
      case 'data.get':
        return getRow(deps, target, args);
      case 'data.delete':
        return deleteRow(deps, target, args);
      case 'data.list':
        return listRows(deps, target, args);
      case 'files.upload':
        return createUpload(deps, target, args);
      case 'files.signedUrl':
        return createSignedUrl(deps, target, args);
      case 'files.delete':
        return deleteFile(deps, target, args);
      default:
        throw new ApiError('not_available', `${method} is not available`);
    }
  };
}

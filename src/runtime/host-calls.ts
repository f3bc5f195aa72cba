import type { Deps } from '../deps.ts';
import { enqueueFromApp, type JobTarget } from '../jobs/enqueue.ts';
import type { HostCallHandler } from './sandbox/pool.ts';

/** The asynchronous platform calls app code may make, bound to one app, release and request. */
export function hostCallsFor(deps: Deps, target: JobTarget): HostCallHandler {
  return async (method, args) => {
    switch (method) {
      case 'jobs.enqueue':
        return enqueueFromApp(deps, target, args);
      default:
        throw { code: 'not_available', message: `${method} is not available` };
    }
  };
}

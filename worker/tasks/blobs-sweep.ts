/** `blobs_sweep` (daily): objects in the bucket that no blob row names, past the grace period, are deleted. */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../src/deps.ts';
import { sweepOrphanObjects } from '../../src/blobs/retention.ts';

export function blobsSweepTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const r = await sweepOrphanObjects(deps);
    if (r.deleted) helpers.logger.info(`blob sweep: ${JSON.stringify(r)}`);
  };
}

/** `kv_sweep` (hourly): KV entries past their expiration are deleted (reads never return them meanwhile). */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../src/deps.ts';
import { sweepExpiredKv } from '../../src/bindings/kv.ts';

export function kvSweepTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const n = await sweepExpiredKv(deps);
    if (n) helpers.logger.info(`kv sweep: ${n} expired entries deleted`);
  };
}

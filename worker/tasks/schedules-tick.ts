import type { Task } from 'graphile-worker';
import * as v from 'valibot';
import type { Deps } from '../../src/deps.ts';
import { fanOutSchedules } from '../../src/jobs/schedules.ts';

/** graphile-worker adds `_cron.ts` (the tick's time) to cron payloads. */
const Payload = v.object({ _cron: v.optional(v.object({ ts: v.string() })) });

/** `app_schedules_tick` (cron, every minute): fans out scheduled app jobs for the tick's time. */
export function schedulesTickTask(deps: Deps): Task {
  return async (raw, helpers) => {
    const parsed = v.safeParse(Payload, raw ?? {});
    const ts =
      parsed.success && parsed.output._cron ? new Date(parsed.output._cron.ts) : new Date();
    const n = await fanOutSchedules(deps, Number.isNaN(ts.getTime()) ? new Date() : ts);
    if (n) helpers.logger.info(`enqueued ${n} scheduled app jobs`);
  };
}

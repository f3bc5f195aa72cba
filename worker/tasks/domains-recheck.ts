/**
 * `domains_recheck` (every minute): pending custom domains whose next check is due are verified
 * again, with growing gaps (1, 5, 15 minutes, then hourly, then every 6 hours) for 7 days after
 * they were added; then the checks stop with a `route.verification_stopped` event.
 */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../src/deps.ts';
import { recheckDueDomains } from '../../src/domains/verify.ts';

export function domainsRecheckTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const r = await recheckDueDomains(deps);
    if (r.checked) helpers.logger.info(`domains re-check: ${JSON.stringify(r)}`);
  };
}

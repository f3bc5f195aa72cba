/**
 * `billing_reconcile` (daily): every account with a Stripe customer is synced from Stripe's API, so
 * a lost webhook heals within a day and a grace period that ran out takes effect (sync.ts decides).
 * One account failing (Stripe down for it, a deleted customer) does not stop the others.
 */
import type { Task } from 'graphile-worker';
import type { Deps } from '../../src/deps.ts';
import { accountsWithCustomers, billingRow } from '../../src/billing/queries.ts';
import { syncAccount } from '../../src/billing/sync.ts';

export async function reconcileBilling(
  deps: Deps,
  now = new Date(),
): Promise<{ accounts: number; changed: number; failed: number }> {
  const out = { accounts: 0, changed: 0, failed: 0 };
  if (!deps.config.stripe.secretKey) return out;
  for (const accountId of await accountsWithCustomers(deps.db)) {
    out.accounts++;
    try {
      const row = await billingRow(deps.db, accountId);
      if (!row) continue;
      const r = await syncAccount(deps, {
        accountId,
        customerId: row.stripe_customer_id,
        source: 'reconcile',
        now,
      });
      if (r.changed) out.changed++;
    } catch (err) {
      out.failed++;
      deps.log.warn('billing reconcile failed for an account', {
        account_id: accountId,
        error: String(err),
      });
    }
  }
  return out;
}

export function billingReconcileTask(deps: Deps): Task {
  return async (_payload, helpers) => {
    const r = await reconcileBilling(deps);
    if (r.accounts) helpers.logger.info(`billing reconcile: ${JSON.stringify(r)}`);
  };
}

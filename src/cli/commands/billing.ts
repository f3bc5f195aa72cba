/** `platform billing`: the plan and subscription; `upgrade <plan>` prints a Stripe Checkout link; `portal` the customer portal's. */
import { createApi } from '../api.ts';
import { c, printJson } from '../output.ts';

export async function billing(opts: { json?: boolean }): Promise<void> {
  const api = await createApi();
  const p = await api.request('GET /v0/billing/plan');
  if (opts.json) return printJson(p);
  const state =
    p.billing_access_state === 'active'
      ? c.green('active')
      : c.yellow(p.billing_access_state.replace(/_/g, ' '));
  const out = [
    `${c.bold('Plan')}          ${p.plan_key} ${c.dim(`(${p.entitlement_source})`)}  billing ${state}${p.grace_ends_at ? c.yellow(` until ${p.grace_ends_at}`) : ''}`,
  ];
  if (p.subscription) {
    const s = p.subscription;
    out.push(
      `${c.bold('Subscription')}  ${s.id} ${s.status}, ${s.cancel_at_period_end ? 'ends' : 'renews'} ${s.current_period_end ?? '-'}`,
    );
  }
  if (!p.billing_configured)
    out.push(
      c.dim(
        'Billing is not set up on this platform; ask its operator to change your plan (npm run admin -- set-plan --account <account id> --plan <plan>).',
      ),
    );
  else
    out.push(
      '',
      c.bold('Plans'),
      ...p.allowed_upgrade_plans.map(
        (x) =>
          `  ${x.plan_key === p.plan_key ? c.green('●') : ' '} ${x.plan_key.padEnd(14)} $${x.price_monthly_usd}/month${x.configured ? '' : c.dim(' (not available)')}`,
      ),
      '',
      c.dim('platform billing upgrade <plan>   ·   platform billing portal'),
    );
  process.stdout.write(out.join('\n') + '\n');
}

export async function billingUpgrade(planKey: string, opts: { json?: boolean }): Promise<void> {
  const api = await createApi();
  const s = await api.request('POST /v0/billing/checkout-session', { body: { plan_key: planKey } });
  if (opts.json) return printJson(s);
  process.stdout.write(
    `Open this link to pay with Stripe Checkout (valid until ${s.expires_at ?? 'it expires'}):\n  ${s.url}\nYour plan changes when Stripe confirms the payment; \`platform account\` shows the new limits.\n`,
  );
}

export async function billingPortal(opts: { json?: boolean }): Promise<void> {
  const api = await createApi();
  const s = await api.request('POST /v0/billing/portal-session');
  if (opts.json) return printJson(s);
  process.stdout.write(
    `Manage payment methods, invoices and your subscription here:\n  ${s.url}\n`,
  );
}

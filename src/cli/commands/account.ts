/** `platform account`: the account's plan, usage against each limit, warnings, flags, and a plan-change preview. */
import { createApi } from '../api.ts';
import { resolveTarget } from '../credentials.ts';
import { c, CliError, printJson } from '../output.ts';
import { formatBytes } from '../../lib/bytes.ts';

const LABELS: Record<string, string> = {
  apps: 'published apps',
  'requests.monthly': 'requests this month',
  app_slugs: 'slugs',
  custom_domains: 'custom domains',
  'storage.bytes': 'app data and files',
};
const count = (n: number) => n.toLocaleString('en-US');

/** A 20-cell bar, coloured yellow from 80% and red at the limit. */
function bar(used: number, limit: number, fmt: (n: number) => string): string {
  if (limit <= 0) return c.dim(used > 0 ? `${fmt(used)} (not in this plan)` : 'not in this plan');
  const ratio = Math.min(1, used / limit);
  const filled = Math.round(ratio * 20);
  const paint = used >= limit ? c.red : ratio >= 0.8 ? c.yellow : c.green;
  return `${paint('█'.repeat(filled))}${c.dim('░'.repeat(20 - filled))} ${fmt(used)} of ${fmt(limit)} (${Math.floor(ratio * 100)}%)`;
}

export async function account(opts: {
  account?: string;
  preview?: string;
  json?: boolean;
}): Promise<void> {
  const api = await createApi();
  const accountId =
    opts.account ??
    (await resolveTarget()).accountId ??
    (await api.request('GET /v0/accounts')).default_account_id;
  if (!accountId) throw new CliError('You belong to no account.', 'not_found');
  const params = { account_id: accountId };
  const [status, limits] = await Promise.all([
    api.request('GET /v0/accounts/{account_id}/status', { params }),
    api.request('GET /v0/accounts/{account_id}/limits', { params }),
  ]);
  const preview = opts.preview
    ? await api.request('GET /v0/accounts/{account_id}/downgrade-preview', {
        params,
        query: { plan: opts.preview as never },
      })
    : undefined;
  if (opts.json) return printJson({ status, limits, ...(preview ? { preview } : {}) });

  const out: string[] = [];
  const state =
    status.billing_access_state === 'active'
      ? c.green('active')
      : c.yellow(status.billing_access_state.replace(/_/g, ' '));
  out.push(
    `${c.bold('Account')} ${accountId}`,
    `${c.bold('Plan')}    ${status.plan_key}  billing ${state}${status.grace_ends_at ? c.dim(` (grace ends ${status.grace_ends_at})`) : ''}${status.suspended ? `  ${c.red('SUSPENDED')}` : ''}`,
  );
  out.push(
    c.dim(
      `usage period ${status.usage_period.period_start.slice(0, 10)} to ${status.usage_period.period_end.slice(0, 10)} (UTC)`,
    ),
    '',
  );
  const width = Math.max(...Object.keys(status.usage).map((m) => (LABELS[m] ?? m).length));
  for (const [metric, used] of Object.entries(status.usage))
    out.push(
      `  ${(LABELS[metric] ?? metric).padEnd(width)}  ${bar(used, status.limits[metric] ?? 0, metric === 'storage.bytes' ? formatBytes : count)}`,
    );
  if (status.active_flags.length) {
    out.push('', c.bold('Flags'));
    for (const f of status.active_flags)
      out.push(
        `  ${c.red(f.flag)} ${f.scope === 'account' ? 'account' : `app ${f.app_id}`}: ${f.reason}`,
      );
  }
  if (status.warnings.length) {
    out.push('', c.bold('Warnings'));
    for (const w of status.warnings)
      out.push(`  ${w.code === 'usage_near_limit' ? c.yellow('!') : c.red('!')} ${w.message}`);
  }
  out.push(
    '',
    c.bold('Features') +
      '  ' +
      Object.entries(limits.features)
        .map(([k, on]) => (on ? c.green(`✔ ${k}`) : c.dim(`✘ ${k}`)))
        .join('  '),
  );
  if (preview) {
    out.push(
      '',
      c.bold(`Moving to ${preview.target_plan_key}`) +
        '  ' +
        (preview.compatible ? c.green('fits') : c.red('does not fit yet')),
    );
    for (const v of preview.violations.filter((x) => x.type !== 'route'))
      out.push(`  ${c.red('✘')} ${v.message}`);
    for (const a of preview.actions)
      out.push(`  ${c.yellow('→')} disable ${a.route_id}: ${a.reason}`);
  }
  process.stdout.write(out.join('\n') + '\n');
}

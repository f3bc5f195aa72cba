/** `platform analytics [--range 7d|30d|90d]`: an app's traffic and activity in the terminal. */
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { c, CliError, printJson, table } from '../output.ts';

const fmt = (n: number) => n.toLocaleString('en-US');

/** A one-line bar chart of daily counts (▁▂▃▄▅▆▇█). */
function spark(values: number[]): string {
  const max = Math.max(1, ...values);
  return values
    .map((v) => (v === 0 ? '·' : '▁▂▃▄▅▆▇█'[Math.min(7, Math.floor((v / max) * 7.999))]))
    .join('');
}

const line = (label: string, obj: Record<string, number>) =>
  `${c.bold(label.padEnd(16))}${Object.entries(obj)
    .map(([k, v]) => `${k.replace(/_/g, ' ')} ${fmt(v)}`)
    .join('  ')}`;

export async function analytics(opts: {
  app?: string;
  range?: string;
  json?: boolean;
}): Promise<void> {
  if (opts.range && !['7d', '30d', '90d'].includes(opts.range))
    throw new CliError(`--range must be 7d, 30d or 90d (got ${opts.range}).`, 'invalid_request');
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const a = await api.request('GET /v0/apps/{app_id}/analytics', {
    params: { app_id: appId },
    query: { range: (opts.range ?? '7d') as '7d' },
  });
  if (opts.json) return printJson(a);
  const out: string[] = [];
  out.push(
    `${c.bold('Analytics')} ${appId}  ${a.from} to ${a.to} (UTC)${a.clamped_to_days !== null ? c.yellow(`  clamped to ${a.clamped_to_days} days by your plan`) : ''}`,
  );
  out.push(
    `${c.bold('Requests'.padEnd(16))}${fmt(a.totals.requests)}  ${c.dim(`(+${fmt(a.totals.bot_requests)} from bots and scripts such as curl, not counted)`)}`,
  );
  out.push(
    `${c.bold('Daily'.padEnd(16))}${spark(a.daily.map((d) => d.requests))}  ${c.dim(`max ${fmt(Math.max(0, ...a.daily.map((d) => d.requests)))}/day`)}`,
  );
  out.push(
    line('Status', a.status_buckets),
    line('Reached through', a.routes),
    line('Answered by', a.runtime_targets),
    line('App users', a.app_users),
    line('Jobs', a.jobs),
    line('Webhooks', a.webhooks),
    '',
  );
  if (a.top_paths.length)
    out.push(
      table(
        a.top_paths.slice(0, 10).map((p) => ({ path: p.path, requests: fmt(p.requests) })),
        ['path', 'requests'],
      ),
      '',
    );
  if (a.referrers.length)
    out.push(
      table(
        a.referrers.slice(0, 10).map((r) => ({ referrer: r.domain, requests: fmt(r.requests) })),
        ['referrer', 'requests'],
      ),
      '',
    );
  out.push(
    a.recent_errors.length
      ? `${c.bold('Recent errors')}\n${a.recent_errors
          .slice(0, 5)
          .map((e) => `  ${c.red(e.type)} ${e.created_at} ${e.message}`)
          .join('\n')}`
      : c.dim('No errors in this range.'),
  );
  process.stdout.write(out.join('\n') + '\n');
}

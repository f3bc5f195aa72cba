/** `platform domains add|ls|verify|rm` and `platform slugs add|ls|rm`: an app's aliases from the terminal. */
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { c, CliError, printJson, table } from '../output.ts';
import type { RouteRecord } from '../../domains/schemas.ts';

type Opts = { app?: string; json?: boolean };
type Check = { check: string; ok: boolean; blocking: boolean; message: string };

const STATUS: Record<string, (s: string) => string> = {
  active: c.green,
  pending_dns: c.yellow,
  disabled: c.dim,
  disabled_downgrade: c.red,
  disabled_billing: c.red,
  deleted: c.dim,
};
const status = (s: string) => (STATUS[s] ?? ((x: string) => x))(s);

/** The records to create, one per line, ready to copy. */
function printRecords(route: RouteRecord): void {
  if (!route.dns_instructions) return;
  process.stdout.write(`\nCreate these DNS records at your DNS provider:\n`);
  const rows = route.dns_instructions.records.map((r) => ({
    type: r.type,
    name: r.name,
    value: r.value,
    why: `${r.required ? '' : 'optional: '}${r.purpose}`,
  }));
  process.stdout.write(table(rows, ['type', 'name', 'value', 'why']) + '\n');
  if (route.dns_instructions.traffic_note)
    process.stdout.write(`\n${c.yellow('note')} ${route.dns_instructions.traffic_note}\n`);
}

function printChecks(checks: Check[]): void {
  for (const ch of checks)
    process.stdout.write(
      `  ${ch.ok ? c.green('✓') : ch.blocking ? c.red('✗') : c.yellow('!')} ${ch.message}\n`,
    );
}

export async function domainsAdd(hostname: string, opts: Opts): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('POST /v0/apps/{app_id}/domains', {
    params: { app_id: appId },
    body: { hostname },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.green('✔ added')} ${r.hostname} ${c.dim(`(${r.route_id}, ${r.status})`)}\n`,
  );
  printRecords(r);
  process.stdout.write(
    `\nThen run ${c.bold(`platform domains verify ${r.hostname}`)} (it is also re-checked in the background for 7 days).\n`,
  );
}

export async function domainsLs(opts: Opts): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('GET /v0/apps/{app_id}/domains', { params: { app_id: appId } });
  if (opts.json) return printJson(r);
  if (!r.domains.length)
    return void process.stdout.write(
      'No custom domains. Add one with `platform domains add <hostname>`.\n',
    );
  const rows = r.domains.map((d) => ({
    hostname: d.hostname,
    status: status(d.status),
    verified: d.verification?.verified_at ?? '—',
    url: d.status === 'active' ? d.url : '',
  }));
  process.stdout.write(table(rows, ['hostname', 'status', 'verified', 'url']) + '\n');
}

/** Exit code 0 when the domain is active; 1 with the diagnosis when it is not yet. */
export async function domainsVerify(hostname: string, opts: Opts): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  try {
    const r = await api.request('POST /v0/apps/{app_id}/domains/{hostname}/verify', {
      params: { app_id: appId, hostname },
      body: {},
    });
    if (opts.json) return printJson(r);
    process.stdout.write(`${c.green('✔ verified')} ${r.hostname} serves the app: ${r.url}\n`);
    if (r.verification?.checks.length) printChecks(r.verification.checks);
  } catch (err) {
    if (!(err instanceof CliError) || err.code !== 'domain_pending_verification') throw err;
    if (opts.json) {
      printJson({ error: { code: err.code, message: err.message, details: err.details } });
      process.exit(1);
    }
    process.stdout.write(`${c.yellow('✗ not verified yet')} ${hostname}\n`);
    printChecks((err.details?.checks ?? []) as Check[]);
    const next = err.details?.next_check_at;
    process.stdout.write(
      `\nFix what is marked ✗ and run this again${typeof next === 'string' ? `; the platform also re-checks by itself (next: ${next})` : ''}. DNS changes can take a while to be seen.\n`,
    );
    process.exit(1);
  }
}

export async function domainsRm(hostname: string, opts: Opts): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('DELETE /v0/apps/{app_id}/domains/{hostname}', {
    params: { app_id: appId, hostname },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.green('✔ removed')} ${r.hostname} ${c.dim('(it no longer serves the app; the app keeps its own origin)')}\n`,
  );
}

export async function slugsAdd(slug: string, opts: Opts): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('POST /v0/apps/{app_id}/slugs', {
    params: { app_id: appId },
    body: { slug },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(`${c.green('✔ added')} the app also serves at ${c.bold(r.url)}\n`);
}

export async function slugsLs(opts: Opts): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('GET /v0/apps/{app_id}/slugs', { params: { app_id: appId } });
  if (opts.json) return printJson(r);
  if (!r.slugs.length)
    return void process.stdout.write('No slugs. Add one with `platform slugs add <slug>`.\n');
  process.stdout.write(
    table(
      r.slugs.map((s) => ({ slug: s.slug ?? '', status: status(s.status), url: s.url })),
      ['slug', 'status', 'url'],
    ) + '\n',
  );
}

export async function slugsRm(slug: string, opts: Opts): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('DELETE /v0/apps/{app_id}/slugs/{slug}', {
    params: { app_id: appId, slug },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(`${c.green('✔ removed')} ${r.hostname}\n`);
}

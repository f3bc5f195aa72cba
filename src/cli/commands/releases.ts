/**
 * The commands about an app's releases: the list, rollback, previews (promote, a new link, ending
 * every link), registered here with their help.
 */
import type { Command } from 'commander';
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { appOpt, examples, jsonOpt } from '../command-kit.ts';
import { c, printJson, table } from '../output.ts';

export async function releases(opts: { app?: string; json?: boolean }): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const r = await api.request('GET /v0/apps/{app_id}/releases', { params: { app_id: appId } });
  if (opts.json) return printJson(r);
  const rows = r.releases.map((x) => ({
    ...x,
    live: x.is_live ? c.green('●') : x.preview ? c.cyan('preview') : '',
    by: x.created_by.key_prefix ?? '-',
    message: x.message ?? '',
  }));
  process.stdout.write(
    table(rows, ['live', 'release_id', 'activation_status', 'created_at', 'by', 'message']) + '\n',
  );
}

export async function rollback(
  releaseId: string,
  opts: { app?: string; json?: boolean },
): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const r = await api.request('POST /v0/apps/{app_id}/rollback', {
    params: { app_id: appId },
    body: { release_id: releaseId },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.green('✔ rolled back')} ${appId} to ${r.release_id} ${c.dim(`(was ${r.previous_release_id})`)}\n  ${r.origin}\n`,
  );
}

export async function promote(
  releaseId: string,
  opts: { app?: string; json?: boolean },
): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const r = await api.request('POST /v0/apps/{app_id}/releases/{release_id}/make-live', {
    params: { app_id: appId, release_id: releaseId },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.green('✔ live')} ${r.release_id} ${c.dim(r.previous_release_id ? `(was ${r.previous_release_id})` : '')}\n  ${r.origin}\n`,
  );
}

/** Publishes a release that waited for its secrets again: a new release, evaluated as a publish is. */
export async function republish(
  releaseId: string,
  opts: { app?: string; json?: boolean; confirmOlder?: boolean },
): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const r = await api.request('POST /v0/apps/{app_id}/releases/{release_id}/republish', {
    params: { app_id: appId, release_id: releaseId },
    body: opts.confirmOlder ? { confirm_older: true } : {},
  });
  if (opts.json) return printJson(r);
  const a = r.activation;
  process.stdout.write(
    a.status === 'live'
      ? `${c.green('✔ live')} ${r.release_id} ${c.dim(`(published again from ${releaseId})`)}\n  ${r.origin}\n`
      : `${c.yellow(`● ${a.status}`)} ${r.release_id}: ${[...a.reasons, ...a.missing_secrets.map((n) => `missing secret ${n}`)].join('; ')}\n`,
  );
}

/**
 * The newest release that waited for secrets and could go live now: newer than the live release
 * (older code goes live only when asked for by name), every secret it missed now set.
 */
export async function readyWaitingRelease(
  api: Awaited<ReturnType<typeof createApi>>,
  appId: string,
): Promise<string | undefined> {
  const [rels, secrets] = await Promise.all([
    api.request('GET /v0/apps/{app_id}/releases', { params: { app_id: appId } }),
    api.request('GET /v0/apps/{app_id}/secrets', { params: { app_id: appId } }),
  ]);
  const present = new Set(secrets.secrets.filter((x) => x.present).map((x) => x.name));
  const live = rels.releases.find((x) => x.is_live);
  const newest = rels.releases.find((x) => x.activation_status === 'pending_secrets' && !x.preview);
  if (!newest || (live && live.created_at > newest.created_at)) return undefined;
  const missing = newest.activation_error?.missing_secrets ?? [];
  return missing.every((n) => present.has(n)) ? newest.release_id : undefined;
}

export async function previewLink(
  releaseId: string,
  opts: { app?: string; json?: boolean },
): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const r = await api.request('POST /v0/apps/{app_id}/releases/{release_id}/preview-link', {
    params: { app_id: appId, release_id: releaseId },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.bold(r.url)}\n  ${c.dim(`opens ${r.origin} in a browser until ${r.expires_at}`)}\n`,
  );
}

export async function previewsRevoke(opts: { app?: string; json?: boolean }): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const r = await api.request('POST /v0/apps/{app_id}/preview-links/revoke', {
    params: { app_id: appId },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.green('✔ preview links ended')} for ${appId}: none made until ${r.revoked_at} opens a preview.\n  ${c.dim('platform previews link <release_id>')} makes a new one.\n`,
  );
}

export function addReleaseCommands(program: Command): void {
  examples(
    program
      .command('releases')
      .description('list releases, newest first')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((o) => releases(o)),
    ['platform releases'],
  );
  examples(
    program
      .command('rollback')
      .argument('<release_id>', 'a release that was live before')
      .description('make an earlier release live again')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((id, o) => rollback(id, o)),
    ['platform rollback rel_0123456789abcdefghjk'],
  );
  examples(
    program
      .command('promote')
      .argument('<release_id>', 'a release published with --preview')
      .description('make a preview the live release (the checks of a publish are made again)')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((id, o) => promote(id, o)),
    ['platform promote rel_0123456789abcdefghjk'],
  );
  examples(
    program
      .command('republish')
      .argument('<release_id>', 'a release that waited for secrets (pending_secrets)')
      .description('publish a release that waited for its secrets again, now that they are set')
      .option(
        '--confirm-older',
        'it is older than the live release: put its older code live anyway',
      )
      .option(...appOpt)
      .option(...jsonOpt)
      .action((id, o) => republish(id, o)),
    ['platform republish rel_0123456789abcdefghjk'],
  );
  const previews = program.command('previews').description('links to preview releases');
  examples(
    previews
      .command('link')
      .argument('<release_id>', 'a release published with --preview')
      .description('a new link that opens the preview in a browser for seven days')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((id, o) => previewLink(id, o)),
    ['platform previews link rel_0123456789abcdefghjk'],
  );
  examples(
    previews
      .command('revoke')
      .description('end every preview link of the app made until now (links made later work)')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((o) => previewsRevoke(o)),
    ['platform previews revoke'],
  );
}

import { spawn } from 'node:child_process';
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { c, CliError, printJson, table } from '../output.ts';

export async function apps(opts: { json?: boolean }): Promise<void> {
  const api = await createApi();
  const r = await api.request('GET /v0/apps');
  if (opts.json) return printJson(r);
  process.stdout.write(
    table(r.apps, ['app_id', 'name', 'live_release_id', 'updated_at', 'origin']) + '\n',
  );
}

export async function unpublish(opts: {
  app?: string;
  yes?: boolean;
  json?: boolean;
}): Promise<void> {
  const appId = await resolveAppId(opts.app);
  if (!opts.yes)
    throw new CliError(
      `Unpublishing takes ${appId} offline.`,
      'confirmation_required',
      undefined,
      'Run again with --yes to confirm. Data, releases and secrets are kept.',
    );
  const api = await createApi();
  const r = await api.request('DELETE /v0/apps/{app_id}', { params: { app_id: appId } });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.yellow('● unpublished')} ${appId} at ${r.deleted_at}; its data is kept. Publish again to bring it back.\n`,
  );
}

export async function erase(opts: {
  app?: string;
  confirm?: string;
  json?: boolean;
}): Promise<void> {
  const appId = await resolveAppId(opts.app);
  if (opts.confirm !== appId)
    throw new CliError(
      `Erasing deletes ${appId}'s data rows, files, app users and secrets for good.`,
      'confirmation_required',
      undefined,
      `Unpublish it first, then run again with --confirm ${appId}.`,
    );
  const api = await createApi();
  const r = await api.request('POST /v0/apps/{app_id}/erase', {
    params: { app_id: appId },
    body: { confirm: appId },
  });
  if (opts.json) return printJson(r);
  const { rows, files, kv_keys, r2_objects, app_users, secrets } = r.erased;
  const stores = kv_keys || r2_objects ? `${kv_keys} KV keys, ${r2_objects} R2 objects, ` : '';
  process.stdout.write(
    `${c.yellow('● erased')} ${appId}: ${rows} rows, ${files} files, ${stores}${app_users} app users, ${secrets} secrets (${r.freed_bytes} bytes of storage freed).\n`,
  );
}

export async function open(opts: { app?: string; json?: boolean }): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const r = await api.request('GET /v0/apps/{app_id}', { params: { app_id: appId } });
  if (opts.json) return printJson({ app_id: appId, origin: r.origin });
  process.stdout.write(`${r.origin}\n`);
  // On a desktop, also open it; anywhere else printing is enough.
  if (
    process.stdout.isTTY &&
    (process.env.DISPLAY || process.env.WAYLAND_DISPLAY || process.platform === 'darwin')
  ) {
    const cmd = process.platform === 'darwin' ? 'open' : 'xdg-open';
    spawn(cmd, [r.origin], { stdio: 'ignore', detached: true })
      .on('error', () => {})
      .unref();
  }
}

import { spawn } from 'node:child_process';
import { createApi } from '../api.ts';
import { resolveAppId } from '../bundle.ts';
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

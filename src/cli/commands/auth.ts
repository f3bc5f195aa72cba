import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { createApi, type Api } from '../api.ts';
import {
  credentialsFile,
  deleteCredentials,
  readCredentials,
  resolveTarget,
  saveCredentials,
} from '../credentials.ts';
import { c, CliError, printJson, table } from '../output.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens `url` in the desktop's browser when there is one; quietly does nothing otherwise. */
function openBrowser(url: string): void {
  const desktop =
    process.platform === 'darwin' ||
    process.platform === 'win32' ||
    process.env.DISPLAY ||
    process.env.WAYLAND_DISPLAY ||
    process.env.BROWSER;
  if (!desktop) return;
  const cmd =
    process.env.BROWSER ||
    (process.platform === 'darwin'
      ? 'open'
      : process.platform === 'win32'
        ? 'explorer'
        : 'xdg-open');
  spawn(cmd, [url], { stdio: 'ignore', detached: true })
    .on('error', () => {})
    .unref();
}

/** RFC 8628 from the client's side: show the code, wait for the browser, honour `interval` and `slow_down`. */
async function deviceLogin(api: Api, opts: { browser: boolean }) {
  const start = await api.request('POST /v0/auth/device/start', {
    body: { client_name: `platform CLI on ${hostname()}` },
    noAuth: true,
  });
  process.stderr.write(
    `\nTo log in, open ${c.bold(start.verification_uri)} and enter the code\n\n    ${c.bold(c.cyan(start.user_code))}\n\n`,
  );
  process.stderr.write(c.dim(`or open ${start.verification_uri_complete}\n`));
  if (opts.browser) openBrowser(start.verification_uri_complete);
  process.stderr.write(c.dim('Waiting for approval in the browser (Ctrl-C to cancel)…\n'));
  let interval = start.interval;
  const deadline = Date.now() + start.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(interval * 1000);
    const r = await api.request('POST /v0/auth/device/poll', {
      body: { device_code: start.device_code },
      noAuth: true,
    });
    switch (r.status) {
      case 'approved':
        return r;
      case 'slow_down':
      case 'authorization_pending':
        interval = r.interval;
        continue;
      case 'denied':
        throw new CliError('The login was denied in the browser.', 'device_denied');
      default:
        throw new CliError(
          `The login code ${r.status === 'expired' ? 'expired' : 'was already used'}.`,
          `device_${r.status}`,
          undefined,
          'Run `platform login` again.',
        );
    }
  }
  throw new CliError(
    'The login code expired before it was approved.',
    'device_expired',
    undefined,
    'Run `platform login` again.',
  );
}

export async function login(opts: {
  apiKey?: string;
  apiUrl?: string;
  browser?: boolean;
}): Promise<void> {
  const apiUrl = (
    opts.apiUrl ??
    process.env.PLATFORM_API_URL ??
    (await readCredentials()).api_url ??
    'http://localhost:8787'
  ).replace(/\/+$/, '');
  process.env.PLATFORM_API_URL = apiUrl;
  if (!opts.apiKey) {
    const api = await createApi({ requireKey: false });
    const approved = await deviceLogin(api, { browser: opts.browser !== false });
    await saveCredentials({
      api_url: apiUrl,
      api_key: approved.api_key,
      api_key_id: approved.api_key_id,
      account_id: approved.account_id,
    });
    process.stdout.write(
      `${c.green('✔ logged in')} to ${apiUrl} ${c.dim(`(key ${approved.key_prefix}…, account ${approved.account_id}; saved in ${credentialsFile()})`)}\n`,
    );
    return;
  }
  if (!/^ap_[A-Za-z0-9_-]{43}$/.test(opts.apiKey))
    throw new CliError(
      'That does not look like an API key (ap_ followed by 43 characters).',
      'invalid_request',
    );
  process.env.PLATFORM_API_KEY = opts.apiKey;
  const api = await createApi();
  const r = await api.request('GET /v0/accounts'); // proves the key works before saving it
  await saveCredentials({ api_url: apiUrl, api_key: opts.apiKey });
  process.stdout.write(
    `${c.green('✔ logged in')} to ${apiUrl} ${c.dim(`(${r.accounts.length} account${r.accounts.length === 1 ? '' : 's'}; saved in ${credentialsFile()})`)}\n`,
  );
}

export async function logout(opts: { revoke?: boolean } = {}): Promise<void> {
  if (opts.revoke) {
    const saved = await readCredentials();
    if (!saved.api_key)
      throw new CliError('Not logged in; there is no saved key to revoke.', 'no_api_key');
    delete process.env.PLATFORM_API_KEY; // revoke the saved key, not one from the environment
    const api = await createApi();
    let id = saved.api_key_id;
    for (let cursor: string | undefined, pages = 0; !id && pages < 50; pages++) {
      const page = await api.request('GET /v0/auth/api-keys', { query: cursor ? { cursor } : {} });
      id = page.api_keys.find((k) => saved.api_key!.startsWith(k.key_prefix) && !k.revoked_at)?.id;
      if (!page.cursor) break;
      cursor = page.cursor;
    }
    if (!id)
      throw new CliError(
        'The saved key is not among your keys; it may be revoked already.',
        'not_found',
      );
    await api.request('DELETE /v0/auth/api-keys/{api_key_id}', { params: { api_key_id: id } });
    process.stdout.write(`${c.green('✔ revoked')} the saved key.\n`);
  }
  const removed = await deleteCredentials();
  process.stdout.write(
    removed
      ? `${c.green('✔ logged out')}: removed ${credentialsFile()}.${opts.revoke ? '' : ' The key itself still works until revoked (platform logout --revoke).'}\n`
      : 'Not logged in; nothing to remove.\n',
  );
}

export async function whoami(opts: { json?: boolean }): Promise<void> {
  const target = await resolveTarget();
  const api = await createApi();
  const r = await api.request('GET /v0/accounts');
  if (opts.json)
    return printJson({
      api_url: target.apiUrl,
      key_prefix: target.apiKey?.slice(0, 11),
      key_source: target.source,
      ...r,
    });
  process.stdout.write(
    `${c.bold(target.apiUrl)} with key ${target.apiKey!.slice(0, 11)}… ${c.dim(`(from ${target.source === 'env' ? 'PLATFORM_API_KEY' : credentialsFile()})`)}\n\n`,
  );
  const chosen = target.accountId ?? r.default_account_id;
  const rows = r.accounts.map((a) => ({ ...a, default: a.id === chosen ? c.green('●') : '' }));
  process.stdout.write(table(rows, ['default', 'account_id', 'name', 'role']) + '\n');
}

import { createApi } from '../api.ts';
import { credentialsFile, deleteCredentials, readCredentials, resolveTarget, saveCredentials } from '../credentials.ts';
import { c, CliError, printJson, table } from '../output.ts';

export async function login(opts: { apiKey?: string; apiUrl?: string }): Promise<void> {
  if (!opts.apiKey) throw new CliError('Pass the key with --api-key.', 'invalid_request', undefined, 'Browser-approved login arrives with device authorization; until then use a key from `npm run admin -- create-user`.');
  if (!/^ap_[A-Za-z0-9_-]{43}$/.test(opts.apiKey)) throw new CliError('That does not look like an API key (ap_ followed by 43 characters).', 'invalid_request');
  const apiUrl = (opts.apiUrl ?? process.env.PLATFORM_API_URL ?? (await readCredentials()).api_url ?? 'http://localhost:8787').replace(/\/+$/, '');
  process.env.PLATFORM_API_URL = apiUrl;
  process.env.PLATFORM_API_KEY = opts.apiKey;
  const api = await createApi();
  const r = await api.request('GET /v0/accounts'); // proves the key works before saving it
  await saveCredentials({ api_url: apiUrl, api_key: opts.apiKey });
  process.stdout.write(`${c.green('✔ logged in')} to ${apiUrl} ${c.dim(`(${r.accounts.length} account${r.accounts.length === 1 ? '' : 's'}; saved in ${credentialsFile()})`)}\n`);
}

export async function logout(): Promise<void> {
  const removed = await deleteCredentials();
  process.stdout.write(removed ? `${c.green('✔ logged out')}: removed ${credentialsFile()}. The key itself still works until revoked.\n` : 'Not logged in; nothing to remove.\n');
}

export async function whoami(opts: { json?: boolean }): Promise<void> {
  const target = await resolveTarget();
  const api = await createApi();
  const r = await api.request('GET /v0/accounts');
  if (opts.json) return printJson({ api_url: target.apiUrl, key_prefix: target.apiKey?.slice(0, 11), key_source: target.source, ...r });
  process.stdout.write(`${c.bold(target.apiUrl)} with key ${target.apiKey!.slice(0, 11)}… ${c.dim(`(from ${target.source === 'env' ? 'PLATFORM_API_KEY' : credentialsFile()})`)}\n\n`);
  const rows = r.accounts.map((a) => ({ ...a, default: a.id === r.default_account_id ? c.green('●') : '' }));
  process.stdout.write(table(rows, ['default', 'account_id', 'name', 'role']) + '\n');
}

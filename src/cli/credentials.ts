/** Where the CLI keeps the server URL and API key: $XDG_CONFIG_HOME/platform/credentials.json, mode 0600. */
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

/** `api_key_id` and `account_id` are known when the key came from a browser-approved login. */
export type Credentials = {
  api_url?: string;
  api_key?: string;
  api_key_id?: string;
  account_id?: string;
};

export function configDir(): string {
  const base = process.env.XDG_CONFIG_HOME || path.join(homedir(), '.config');
  return path.join(base, 'platform');
}

export function credentialsFile(): string {
  return path.join(configDir(), 'credentials.json');
}

export async function readCredentials(): Promise<Credentials> {
  try {
    return JSON.parse(await readFile(credentialsFile(), 'utf8')) as Credentials;
  } catch {
    return {};
  }
}

export async function saveCredentials(creds: Credentials): Promise<void> {
  await mkdir(configDir(), { recursive: true, mode: 0o700 });
  await writeFile(credentialsFile(), JSON.stringify(creds, null, 2) + '\n', { mode: 0o600 });
  await chmod(credentialsFile(), 0o600);
}

export async function deleteCredentials(): Promise<boolean> {
  try {
    await rm(credentialsFile());
    return true;
  } catch {
    return false;
  }
}

/** Environment first, then the saved file, then the default local server. */
export async function resolveTarget(): Promise<{
  apiUrl: string;
  apiKey: string | undefined;
  accountId: string | undefined;
  source: 'env' | 'file' | 'none';
}> {
  const saved = await readCredentials();
  const apiUrl = (process.env.PLATFORM_API_URL || saved.api_url || 'http://localhost:8787').replace(
    /\/+$/,
    '',
  );
  const accountId = process.env.PLATFORM_ACCOUNT_ID || undefined;
  if (process.env.PLATFORM_API_KEY)
    return { apiUrl, apiKey: process.env.PLATFORM_API_KEY, accountId, source: 'env' };
  return {
    apiUrl,
    apiKey: saved.api_key,
    accountId: accountId ?? saved.account_id,
    source: saved.api_key ? 'file' : 'none',
  };
}

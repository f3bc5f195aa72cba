/**
 * The CLI's API: the shared typed client (`src/client/v0.ts`) pointed at the configured platform
 * with the saved key. Contract errors become CliErrors with their code; network failures and
 * refused keys get a hint.
 */
import { createV0Client, type V0Client } from '../client/v0.ts';
import { resolveTarget } from './credentials.ts';
import { CliError } from './output.ts';

export type Api = {
  url: string;
  request: V0Client['request'];
  /** a route that answers bytes (a download), as the raw response; an error answer becomes a CliError */
  download(path: string): Promise<Response>;
};

export async function createApi(options: { requireKey?: boolean } = {}): Promise<Api> {
  return createApiFor(await resolveTarget(), options);
}

/** The same for a given server and key (`platform dev`'s own local service). */
export function createApiFor(
  target: { apiUrl: string; apiKey: string | undefined; accountId?: string | undefined },
  options: { requireKey?: boolean } = {},
): Api {
  if (options.requireKey !== false && !target.apiKey) {
    throw new CliError(
      'Not logged in.',
      'no_api_key',
      undefined,
      'Run `platform login` (it opens the console to approve this device), or set PLATFORM_API_KEY.',
    );
  }
  // the account chosen when this device was approved (or PLATFORM_ACCOUNT_ID) for account-scoped routes
  const client = createV0Client({
    baseUrl: target.apiUrl,
    apiKey: target.apiKey,
    accountId: target.accountId,
  });
  const request = (async (
    route: Parameters<V0Client['call']>[0],
    options?: Parameters<V0Client['call']>[1],
  ) => {
    let answer;
    try {
      answer = await client.call(route, options as never);
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      throw new CliError(
        `Cannot reach the platform at ${target.apiUrl}${cause ? ` (${cause})` : ''}.`,
        'unreachable',
        undefined,
        'Is it running? Start it with `npm start`, or point PLATFORM_API_URL at your server.',
      );
    }
    if (answer.ok) return answer.body;
    const { error } = answer;
    const hint =
      answer.status === 401 && !options?.noAuth
        ? 'Your key was refused: run `platform login` again, or check PLATFORM_API_KEY.'
        : undefined;
    throw new CliError(error.message, error.code, error.details, hint);
  }) as V0Client['request'];
  const download = async (path: string) => {
    const res = await fetch(new URL(path, target.apiUrl), {
      headers: {
        ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
        ...(target.accountId ? { 'x-platform-account-id': target.accountId } : {}),
      },
    }).catch(() => {
      throw new CliError(`Cannot reach the platform at ${target.apiUrl}.`, 'unreachable');
    });
    if (res.ok) return res;
    const body = (await res.json().catch(() => null)) as {
      error?: { code: string; message: string };
    } | null;
    throw new CliError(
      body?.error?.message ?? `The platform answered ${res.status}.`,
      body?.error?.code ?? 'internal_error',
    );
  };
  return { url: target.apiUrl, request, download };
}

/** The CLI's HTTP client for `/v0/*`: contract errors become CliErrors with their code; network failures get a hint. */
import { resolveTarget } from './credentials.ts';
import { CliError } from './output.ts';

export type Api = { url: string; request<T = any>(method: string, path: string, body?: unknown, init?: { bodyStream?: ReadableStream<Uint8Array>; noAuth?: boolean }): Promise<T> };

export async function createApi(options: { requireKey?: boolean } = {}): Promise<Api> {
  const target = await resolveTarget();
  if (options.requireKey !== false && !target.apiKey) {
    throw new CliError('No API key configured.', 'no_api_key', undefined, 'Run `platform login --api-key <key>` or set PLATFORM_API_KEY. An operator creates your first key with `npm run admin -- create-user --email you@example.com`.');
  }
  return {
    url: target.apiUrl,
    async request(method, path, body, init = {}) {
      const headers: Record<string, string> = {};
      if (target.apiKey && !init.noAuth) headers.authorization = `Bearer ${target.apiKey}`;
      let payload: BodyInit | undefined;
      if (init.bodyStream) {
        payload = init.bodyStream;
        headers['content-type'] = 'application/json';
      } else if (body !== undefined) {
        payload = JSON.stringify(body);
        headers['content-type'] = 'application/json';
      }
      let res: Response;
      try {
        res = await fetch(target.apiUrl + path, { method, headers, body: payload, ...(init.bodyStream ? { duplex: 'half' } : {}) } as RequestInit);
      } catch (err) {
        const cause = (err as { cause?: { code?: string } }).cause?.code;
        throw new CliError(`Cannot reach the platform at ${target.apiUrl}${cause ? ` (${cause})` : ''}.`, 'unreachable', undefined, 'Is it running? Start it with `npm start`, or point PLATFORM_API_URL at your server.');
      }
      const text = await res.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      if (!res.ok) {
        const e = json?.error;
        const hint = res.status === 401 ? 'Check your key: `platform login --api-key <key>` or PLATFORM_API_KEY.' : undefined;
        throw new CliError(e?.message ?? `HTTP ${res.status}`, e?.code ?? `http_${res.status}`, e?.details, hint);
      }
      return json;
    },
  };
}

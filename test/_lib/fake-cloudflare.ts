/**
 * Cloudflare's v4 API on loopback for Cloudflare for SaaS custom hostnames, as the platform uses
 * it: Bearer token, `{success, errors, messages, result}` envelopes, the duplicate-hostname error
 * (code 1406, HTTP 409), custom hostnames with an ownership TXT record and TXT certificate
 * validation records. Tests drive Cloudflare's side: `activate` (the customer's records were
 * found and the certificate issued), `claim` (someone else's hostname), `failNext` (a 500, or a
 * dropped connection).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';

type CustomHostname = {
  id: string;
  hostname: string;
  status: string;
  ssl: {
    id: string;
    status: string;
    method: string;
    type: string;
    validation_records: { txt_name: string; txt_value: string }[];
    validation_errors?: { message: string }[];
  };
  ownership_verification: { type: string; name: string; value: string };
  verification_errors: string[];
  created_at: string;
};

export type FakeCloudflare = Awaited<ReturnType<typeof startFakeCloudflare>>;

export async function startFakeCloudflare(options: { token: string; zoneId: string }) {
  const hostnames = new Map<string, CustomHostname>();
  const calls: { method: string; path: string; body: any; auth: string | undefined }[] = [];
  let fail: 'status' | 'drop' | null = null;
  const envelope = (result: unknown, errors: { code: number; message: string }[] = []) => ({
    success: errors.length === 0,
    errors,
    messages: [],
    result,
  });

  function make(hostname: string): CustomHostname {
    return {
      id: randomUUID(),
      hostname,
      status: 'pending',
      ssl: {
        id: randomUUID(),
        status: 'pending_validation',
        method: 'txt',
        type: 'dv',
        validation_records: [
          {
            txt_name: `_acme-challenge.${hostname}`,
            txt_value: randomBytes(16).toString('base64url'),
          },
        ],
      },
      ownership_verification: {
        type: 'txt',
        name: `_cf-custom-hostname.${hostname}`,
        value: randomUUID(),
      },
      verification_errors: ['custom hostname does not CNAME to this zone.'],
      created_at: new Date().toISOString(),
    };
  }

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString();
    const body = text ? JSON.parse(text) : undefined;
    const url = new URL(req.url ?? '/', 'http://x');
    calls.push({
      method: req.method ?? '',
      path: url.pathname,
      body,
      auth: req.headers.authorization,
    });
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (fail === 'drop') {
      fail = null;
      return void req.socket.destroy();
    }
    if (fail === 'status') {
      fail = null;
      return send(500, envelope(null, [{ code: 1000, message: 'Internal server error' }]));
    }
    if (req.headers.authorization !== `Bearer ${options.token}`)
      return send(403, envelope(null, [{ code: 10000, message: 'Authentication error' }]));
    const base = `/client/v4/zones/${options.zoneId}/custom_hostnames`;
    if (!url.pathname.startsWith(base))
      return send(404, envelope(null, [{ code: 7003, message: 'Could not route to this path' }]));
    const id = url.pathname.slice(base.length + 1);
    const byId = [...hostnames.values()].find((h) => h.id === id);
    if (req.method === 'POST' && !id) {
      if (!body?.hostname || body.ssl?.method !== 'txt')
        return send(400, envelope(null, [{ code: 1400, message: 'Invalid request' }]));
      if (hostnames.has(body.hostname))
        return send(
          409,
          envelope(null, [{ code: 1406, message: 'Duplicate custom hostname found.' }]),
        );
      const h = make(body.hostname);
      hostnames.set(h.hostname, h);
      return send(201, envelope(h));
    }
    if (req.method === 'GET' && byId) return send(200, envelope(byId));
    if (req.method === 'DELETE' && byId) {
      hostnames.delete(byId.hostname);
      return send(200, envelope({ id: byId.id }));
    }
    return send(
      404,
      envelope(null, [{ code: 1436, message: 'The custom hostname was not found.' }]),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    apiBase: `http://127.0.0.1:${port}/client/v4`,
    calls,
    hostnames,
    /** The customer's records are in place: the hostname and its certificate become active. */
    activate(hostname: string) {
      const h = hostnames.get(hostname)!;
      h.status = 'active';
      h.ssl.status = 'active';
      h.verification_errors = [];
    },
    /** Another Cloudflare customer already has this hostname. */
    claim(hostname: string) {
      hostnames.set(hostname, make(hostname));
    },
    failNext(how: 'status' | 'drop') {
      fail = how;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

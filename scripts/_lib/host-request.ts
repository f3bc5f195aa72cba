/** A benchmark's HTTP client: requests to the service on loopback by Host header, with the bench user's key on bodies. */
import http from 'node:http';

export type HostRequest = (
  method: string,
  path: string,
  host: string,
  body?: string,
) => Promise<{ status: number; text: string }>;

export function hostRequester(port: number, apiKey: string, agent: http.Agent): HostRequest {
  return (method, path, host, body) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          agent,
          headers: {
            host,
            ...(body
              ? { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }
              : {}),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}

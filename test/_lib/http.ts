/** Plain HTTP to a service on loopback with any Host header (fetch() does not let a caller set it), and process checks. */
import http from 'node:http';

export type Answer = { status: number; body: any; text: string; headers: http.IncomingHttpHeaders };

/** One request on a fresh connection; a refused or broken connection is status 0. */
export function request(
  port: number,
  method: string,
  path: string,
  options: {
    host?: string;
    key?: string;
    body?: unknown;
    timeoutMs?: number;
    headers?: Record<string, string>;
  } = {},
): Promise<Answer> {
  return new Promise((resolve) => {
    const data = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers = {
      ...options.headers,
      host: options.host ?? 'api.localhost',
      ...(options.key ? { authorization: `Bearer ${options.key}` } : {}),
      ...(data ? { 'content-type': 'application/json' } : {}),
    };
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        timeout: options.timeoutMs ?? 10_000,
        headers,
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let body: unknown = null;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body, text, headers: res.headers });
        });
      },
    );
    req.on('error', () => resolve({ status: 0, body: null, text: '', headers: {} }));
    req.on('timeout', () => req.destroy());
    req.end(data);
  });
}

/** Whether a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Load runs for benchmarks: wrk when installed (else autocannon), requests/s and p50/p99 latency.
 * Headers are sent as given; `host` is spelled `Host` for wrk, which otherwise sends two.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type LoadResult = {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Requests answered in the run (wrk counts them; autocannon's figure is derived). */
  requests: number;
};

export type LoadOptions = {
  seconds: number;
  connections: number;
  /** Run wrk on this core alone (taskset), one thread: the load off the measured runtime's core. */
  cpu?: number;
  /** A POST with this body instead of a GET (wrk through a Lua script). */
  post?: { body: string; contentType: string };
};

let wrk: Promise<boolean> | undefined;
export function hasWrk(): Promise<boolean> {
  wrk ??= run('wrk', ['--version']).then(
    () => true,
    (e) => /^wrk /m.test(String(e.stdout ?? '') + String(e.stderr ?? '')),
  );
  return wrk;
}

function ms(v: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(v);
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n;
}

export async function load(
  label: string,
  url: string,
  headers: Record<string, string>,
  options: LoadOptions,
): Promise<LoadResult> {
  const { seconds, connections } = options;
  if (await hasWrk()) {
    const threads = options.cpu === undefined ? '2' : '1';
    const args = [
      '-t',
      threads,
      '-c',
      String(connections),
      '-d',
      `${seconds}s`,
      '--timeout',
      '10s',
      '--latency',
      url,
    ];
    let scriptDir: string | undefined;
    if (options.post) {
      scriptDir = await mkdtemp(path.join(tmpdir(), 'wrk-'));
      const script = path.join(scriptDir, 'post.lua');
      // a long bracket whose level the body cannot close
      let eq = '=';
      while (options.post.body.includes(`]${eq}]`)) eq += '=';
      await writeFile(
        script,
        `wrk.method = "POST"\nwrk.headers["Content-Type"] = "${options.post.contentType}"\nwrk.body = [${eq}[${options.post.body}]${eq}]\n`,
      );
      args.unshift('-s', script);
    }
    // wrk drops its own Host header only for one spelled `Host`; a `host` header would make two, and
    // Node keeps the first, so part of the load would hit the API host's 404 instead of the app
    for (const [k, v] of Object.entries(headers))
      args.unshift('-H', `${k === 'host' ? 'Host' : k}: ${v}`);
    const [bin, argv] =
      options.cpu === undefined
        ? ['wrk', args]
        : ['taskset', ['-c', String(options.cpu), 'wrk', ...args]];
    const { stdout } = await run(bin, argv, { maxBuffer: 1 << 20 }).finally(
      () => scriptDir && rm(scriptDir, { recursive: true, force: true }),
    );
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
    const p50 = ms(/\s50%\s+(\S+)/.exec(stdout)?.[1] ?? '');
    const p99 = ms(/\s99%\s+(\S+)/.exec(stdout)?.[1] ?? '');
    const errors =
      Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0) +
      Number(/Socket errors:.*?timeout (\d+)/.exec(stdout)?.[1] ?? 0);
    const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? Math.round(rps * seconds));
    return { label, rps, p50, p99, errors, requests };
  }
  const { default: autocannon } = await import('autocannon' as string).catch(() => {
    throw new Error(
      'benchmarks need a load generator: wrk (apt-get install wrk) or autocannon (npm install --no-save autocannon)',
    );
  });
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    headers: options.post ? { ...headers, 'content-type': options.post.contentType } : headers,
    ...(options.post ? { method: 'POST', body: options.post.body } : {}),
  });
  return {
    label,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.non2xx + r.errors,
    requests: r.requests.total,
  };
}

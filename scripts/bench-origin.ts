/**
 * App-origin speed. Publishes an app with a ~20 KB index.html and a trivial server handler on the
 * real service, starts a bare Hono server returning the same bytes from memory in another
 * process (the page, the page as brotli, the handler's text), and loads each with wrk (or
 * autocannon when wrk is missing) in the same run. Prints requests/s, p50 and p99 latency and
 * each platform row's ratio to the bare Hono row sending the same bytes, plus a release's first
 * request, and Cloudflare's workerd (devDependency) running the same handler module, where it runs.
 *   npm run bench:origin [-- --seconds 3 --rounds 8 --connections 32 --releases 5]
 */
import { startWorkerd } from './_lib/workerd.ts';
import { execFile, spawn } from 'node:child_process';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { publishServerApp, startBenchEnv } from './bench-env.ts';
import { median } from './_lib/stats.ts';
import { hasWrk, load as loadRun } from './_lib/load.ts';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '8' },
    releases: { type: 'string', default: '5' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const RELEASES = Number(values.releases);
const SIZE = 20_000;

type Result = {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpuUs?: number;
};

/**
 * CPU time (user + system, µs) a process has used: this one through process.cpuUsage(), another
 * through /proc (Linux). Undefined where neither works; the CPU column is then left out.
 */
async function cpuTimeUs(pid?: number): Promise<number | undefined> {
  if (pid === undefined) {
    const u = process.cpuUsage();
    return u.user + u.system;
  }
  try {
    const stat = await (await import('node:fs/promises')).readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
    return (ticks / 100) * 1e6; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

/** A load run that also reports the server's CPU time per request (the server process given by pid; none = this one). */
async function measured(
  label: string,
  url: string,
  headers: Record<string, string>,
  pid: number | undefined,
  seconds?: number,
): Promise<Result> {
  const before = await cpuTimeUs(pid);
  const r = await load(label, url, headers, seconds);
  const after = await cpuTimeUs(pid);
  const requests = r.rps * (seconds ?? SECONDS);
  return before !== undefined && after !== undefined && requests > 0
    ? { ...r, cpuUs: (after - before) / requests }
    : r;
}

const load = (label: string, url: string, headers: Record<string, string>, seconds = SECONDS) =>
  loadRun(label, url, headers, { seconds, connections: CONNECTIONS });

const env = await startBenchEnv();
const { operatorVerify } = await import('../src/domains/verify.ts');
await env.server!.runtime.sandbox().warm(); // as npm start does at boot
const page = '<!doctype html>' + 'x'.repeat(SIZE - 15);
const serverSource = (n: number) =>
  `export default { fetch(request) { return new Response('hello from the sandbox (release ${n})', { headers: { 'content-type': 'text/plain' } }); } };`;
let appId = '';
const publishRelease = (n: number) =>
  publishServerApp(env, serverSource(n), {
    ...(appId ? { appId } : {}),
    files: [{ path: 'public/index.html', type: 'text/html', body: page }],
  });
appId = (await publishRelease(0)).app_id;
const host = `${appId}.apps.localhost`;
// the same app through a verified custom domain (the route table's lookup on top of the canonical path)
const customHost = 'bench.example.test';
const added = await fetch(`${env.url}/v0/apps/${appId}/domains`, {
  method: 'POST',
  headers: { authorization: `Bearer ${env.apiKey}`, 'content-type': 'application/json' },
  body: JSON.stringify({ hostname: customHost }),
});
if (added.status !== 201)
  throw new Error(`adding ${customHost}: ${added.status} ${await added.text()}`);
await operatorVerify(env.deps, customHost);

// A release's first request is timed by curl in its own process when it is installed, as a browser
// would see it: a client inside this process would add its own first-use costs (Node compiles the
// IPv6 regex of net.isIP on a first connection, ~10 ms) to the server's.
const hasCurl = await run('curl', ['--version']).then(
  () => true,
  () => false,
);
const timed = async (path: string): Promise<{ status: number; body: string; ms: number }> => {
  if (hasCurl) {
    const { stdout } = await run('curl', [
      '-s',
      '-H',
      `Host: ${host}`,
      '-w',
      '\n%{http_code} %{time_total}',
      `${env.url}${path}`,
    ]);
    const cut = stdout.lastIndexOf('\n');
    const [status, seconds] = stdout.slice(cut + 1).split(' ');
    return { status: Number(status), body: stdout.slice(0, cut), ms: Number(seconds) * 1000 };
  }
  // node:http, because fetch() does not let a caller set the Host header.
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: env.port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - t }),
      );
    });
    req.on('error', reject);
  });
};

// A release's first request: the live-release lookup, the release's file table, its sources,
// a new QuickJS runtime with the prelude and the module load (sandbox workers already up).
// Measured for the first release and for RELEASES more, each published into the running service.
const firsts: { ms: number; next: number; status: number }[] = [];
for (let n = 0; n <= RELEASES; n++) {
  if (n > 0) await publishRelease(n);
  const first = await timed('/api');
  if (!first.body.includes(`(release ${n})`))
    throw new Error(`release ${n} was not the one answering: ${first.status} ${first.body}`);
  const next = await timed('/api');
  firsts.push({ ms: first.ms, next: next.ms, status: first.status });
}

// The headers the platform's br static hit sends (less those Node adds itself), for the bare row sending the same ones.
const brHeaders = await new Promise<Record<string, string>>((resolve, reject) => {
  http
    .get(
      { host: '127.0.0.1', port: env.port, path: '/', headers: { host, 'accept-encoding': 'br' } },
      (res) => {
        res.resume();
        const {
          date: _d,
          connection: _c,
          'keep-alive': _k,
          'content-length': _l,
          ...rest
        } = res.headers as Record<string, string>;
        resolve(rest);
      },
    )
    .on('error', reject);
});
const bare = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    'scripts/bench-bare-hono.ts',
    String(SIZE),
    `hello from the sandbox (release ${RELEASES})`,
    JSON.stringify(brHeaders),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
process.on('exit', () => bare.kill()); // also when a load run throws
const barePort = await new Promise<number>((resolve) =>
  bare.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
);

// Cloudflare's workerd running the same handler module (devDependency `workerd`), from a generated
// config; skipped with a message where its binary cannot run.
const workerd = await startWorkerd(serverSource(RELEASES), { probe: '/api' });
if (!workerd) console.log('workerd: not available here; its row is skipped');

// Interleaved rounds, medians: a 2-core machine shared with the load generator is noisy.
// The order alternates between rounds so a drift in the machine's speed does not favour one target.
// Each platform target is paired with the bare Hono answer it is compared with (same bytes on the wire).
const bareUrl = `http://127.0.0.1:${barePort}`;
const targets = [
  (seconds?: number) =>
    measured('bare Hono, 20 KB from memory', `${bareUrl}/`, {}, bare.pid, seconds),
  (seconds?: number) =>
    measured('platform static hit, 20 KB', `${env.url}/`, { host }, undefined, seconds),
  (seconds?: number) =>
    measured('platform server handler (QuickJS)', `${env.url}/api`, { host }, undefined, seconds),
  (seconds?: number) =>
    measured('bare Hono, the same text', `${bareUrl}/text`, {}, bare.pid, seconds),
  (seconds?: number) =>
    measured(
      'bare Hono, the page as brotli',
      `${bareUrl}/br`,
      { 'accept-encoding': 'br' },
      bare.pid,
      seconds,
    ),
  (seconds?: number) =>
    measured(
      'platform static hit, br',
      `${env.url}/`,
      { host, 'accept-encoding': 'br' },
      undefined,
      seconds,
    ),
  (seconds?: number) =>
    measured(
      'platform static hit, custom domain',
      `${env.url}/`,
      { host: customHost },
      undefined,
      seconds,
    ),
  (seconds?: number) =>
    measured(
      `bare Hono, brotli + our ${Object.keys(brHeaders).length} headers`,
      `${bareUrl}/br-same-headers`,
      { 'accept-encoding': 'br' },
      bare.pid,
      seconds,
    ),
  ...(workerd
    ? [
        (seconds?: number) =>
          measured('workerd, the same handler', `${workerd.url}/api`, {}, workerd.pid, seconds),
      ]
    : []),
];
const rounds: Result[][] = targets.map(() => []);
// One uncounted second first, so every target's code is optimised before it is measured.
for (const t of targets) await t(1);
for (let i = 0; i < ROUNDS; i++) {
  const order = targets.map((_, k) => k);
  if (i % 2 === 1) order.reverse();
  for (const t of order) rounds[t]!.push(await targets[t]!());
}
bare.kill();
workerd?.stop();
const results: Result[] = rounds.map((rs) => ({
  label: rs[0]!.label,
  rps: median(rs.map((r) => r.rps)),
  p50: median(rs.map((r) => r.p50)),
  p99: median(rs.map((r) => r.p99)),
  errors: rs.reduce((n, r) => n + r.errors, 0),
  cpuUs: rs.every((r) => r.cpuUs !== undefined) ? median(rs.map((r) => r.cpuUs!)) : undefined,
}));
// static against the bare page; the server handler against bare Hono's same text; br static against bare brotli
const ratios = rounds[1]!.map((r, i) => [
  r.rps / rounds[0]![i]!.rps,
  rounds[2]![i]!.rps / rounds[3]![i]!.rps,
  rounds[5]![i]!.rps / rounds[4]![i]!.rps,
  rounds[6]![i]!.rps / rounds[0]![i]!.rps,
  rounds[5]![i]!.rps / rounds[7]![i]!.rps,
]);

const base = results[0]!.rps;
console.log(
  `\n${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${SECONDS} s, medians; ${(await hasWrk()) ? 'wrk' : 'autocannon'}; ${(await import('node:os')).availableParallelism()} cores\n`,
);
console.log(
  'target'.padEnd(38),
  'req/s'.padStart(9),
  'p50 ms'.padStart(8),
  'p99 ms'.padStart(8),
  'x bare'.padStart(7),
  'errors'.padStart(7),
  'server CPU µs/req'.padStart(18),
);
for (const r of results) {
  console.log(
    r.label.padEnd(38),
    r.rps.toFixed(0).padStart(9),
    r.p50.toFixed(2).padStart(8),
    r.p99.toFixed(2).padStart(8),
    (r.rps / base).toFixed(2).padStart(7),
    String(r.errors).padStart(7),
    (r.cpuUs === undefined ? '-' : r.cpuUs.toFixed(1)).padStart(18),
  );
}
console.log('\nper round, req/s (k) and server CPU µs/request:');
for (const rs of rounds)
  console.log(
    `  ${rs[0]!.label.padEnd(38)} ${rs.map((r) => `${(r.rps / 1000).toFixed(1)}${r.cpuUs === undefined ? '' : `/${r.cpuUs.toFixed(1)}`}`).join('  ')}`,
  );
console.log(
  `\nper-round ratios to the matching bare Hono answer (static / server vs the same text / br static vs the same brotli): ${ratios.map(([a, b, c]) => `${a!.toFixed(2)}/${b!.toFixed(2)}/${c!.toFixed(2)}`).join('  ')}`,
);
console.log(
  `median of per-round ratios: static ${median(ratios.map((r) => r[0]!)).toFixed(2)}, server ${median(ratios.map((r) => r[1]!)).toFixed(2)}, br static ${median(ratios.map((r) => r[2]!)).toFixed(2)}, static via a custom domain ${median(ratios.map((r) => r[3]!)).toFixed(2)}`,
);
console.log(
  `br static / bare Hono sending the same bytes with the same ${Object.keys(brHeaders).length} headers (${Object.keys(brHeaders).join(', ')}), per round: ${ratios.map((r) => r[4]!.toFixed(2)).join(' ')}; median ${median(ratios.map((r) => r[4]!)).toFixed(2)}`,
);
if (workerd) {
  const vsWorkerd = rounds[2]!.map((r, i) => r.rps / rounds[8]![i]!.rps);
  console.log(
    `platform server handler / workerd running it, per round: ${vsWorkerd.map((x) => x.toFixed(2)).join(' ')}; median ${median(vsWorkerd).toFixed(2)}`,
  );
}
if (rounds.slice(0, 6).every((rs) => rs.every((r) => r.cpuUs !== undefined))) {
  // CPU per request is the cost of the code itself; req/s also moves with scheduling and steal on a shared VM.
  const cpuRatios = rounds[0]!.map((r, i) => r.cpuUs! / rounds[1]![i]!.cpuUs!);
  console.log(
    `bare / static server CPU per request, per round: ${cpuRatios.map((x) => x.toFixed(2)).join(' ')}; median ${median(cpuRatios).toFixed(2)}`,
  );
  const brCpu = rounds[4]!.map((r, i) => r.cpuUs! / rounds[5]![i]!.cpuUs!);
  console.log(
    `bare / br static server CPU per request (the same brotli bytes), per round: ${brCpu.map((x) => x.toFixed(2)).join(' ')}; median ${median(brCpu).toFixed(2)}`,
  );
}
console.log(
  `\nfirst request to a release (server handler, timed by ${hasCurl ? 'curl' : 'an in-process client'}), ms: ${firsts.map((f) => f.ms.toFixed(1)).join(', ')} (first release of the process, then ${RELEASES} republished ones)`,
);
console.log(
  `median ${median(firsts.map((f) => f.ms)).toFixed(1)} ms; the request after each: median ${median(firsts.map((f) => f.next)).toFixed(1)} ms`,
);
await env.close();
process.exit(0);

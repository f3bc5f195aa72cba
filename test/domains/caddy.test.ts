/**
 * The shipped docs/Caddyfile in front of the platform, with Debian's `caddy` and its internal CA
 * (`local_certs`, since no public CA is reachable from here): a verified custom domain gets a
 * certificate at its first visit and serves the app over HTTPS; a name the platform does not
 * serve (an unknown one, a pending domain) gets no certificate at all.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setPlan } from '../../src/plans/operator.ts';
import { operatorVerify } from '../../src/domains/verify.ts';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, freePort, listen, newUser } from '../_lib/harness.ts';
import { waitFor } from '../_lib/apps.ts';

const TOKEN = 'caddy-ask-token-0123456789';
const h = await createHarness({ PLATFORM_PLANS_FILE: '', PLATFORM_TLS_ASK_TOKEN: TOKEN });
const upstream = await listen(h.server);
const dir = mkdtempSync(path.join(tmpdir(), 'platform-caddy-'));
const [httpPort, httpsPort] = [await freePort(), await freePort()];

// the shipped file, with what a test needs in its global block: the internal CA, its own ports and storage, no admin API
const shipped = readFileSync('docs/Caddyfile', 'utf8');
const caddyfile = shipped.replace(
  /^\{\n/m,
  `{\n\tadmin off\n\tlocal_certs\n\tskip_install_trust\n\thttp_port ${httpPort}\n\thttps_port ${httpsPort}\n\tstorage file_system ${dir}/data\n`,
);
assert.ok(caddyfile !== shipped, 'the Caddyfile has a global options block');
writeFileSync(path.join(dir, 'Caddyfile'), caddyfile);

let caddy: ChildProcess | undefined;
let caddyLog = '';

async function startCaddy(): Promise<void> {
  caddy = spawn(
    'caddy',
    ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'],
    {
      env: {
        ...process.env,
        HOME: dir,
        XDG_DATA_HOME: dir,
        XDG_CONFIG_HOME: dir,
        PLATFORM_UPSTREAM: `127.0.0.1:${upstream.port}`,
        PLATFORM_ASK_URL: `http://127.0.0.1:${upstream.port}/_internal/tls/permission?token=${TOKEN}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  caddy.stdout!.on('data', (d) => (caddyLog += d));
  caddy.stderr!.on('data', (d) => (caddyLog += d));
  caddy.on(
    'error',
    (err) =>
      (caddyLog += `\nspawn failed: ${err.message} (install Debian's caddy package: apt-get install caddy)`),
  );
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const s = net.connect(httpsPort, '127.0.0.1', () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      }),
    15_000,
  ).catch(() => assert.unreachable(`caddy did not start:\n${caddyLog}`));
}

/** GET over TLS to Caddy with `servername` as SNI and Host, trusting only Caddy's local root. */
function fetchTls(servername: string): Promise<{ status: number; body: string; issuer: string }> {
  const root = path.join(dir, 'data/pki/authorities/local/root.crt');
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: httpsPort,
        servername,
        path: '/',
        headers: { host: servername },
        ca: readFileSync(root),
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        const issuer = String(
          (res.socket as import('node:tls').TLSSocket).getPeerCertificate().issuer?.CN ?? '',
        );
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, issuer }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** The handshake (or the request) fails: no certificate for this name. */
async function refused(servername: string): Promise<void> {
  const outcome = await fetchTls(servername).then(
    (r) => `answered ${r.status}`,
    (err: Error) => err.message,
  );
  assert.not.ok(outcome.startsWith('answered'), `${servername}: ${outcome}`);
}

test('a verified custom domain gets a certificate and serves the app over HTTPS; other names get none', async () => {
  await startCaddy();
  await waitFor(
    async () => existsSync(path.join(dir, 'data/pki/authorities/local/root.crt')),
    10_000,
  );
  const u = await newUser(h);
  await setPlan(h.deps, { accountId: u.account_id, planKey: 'starter' });
  const pub = await h.call('PUT', '/v0/apps', {
    key: u.api_key,
    body: site({ files: [file('public/index.html', '<h1>served over https</h1>')] }),
  });
  const appId = pub.body.app_id as string;
  await h.api('POST /v0/apps/{app_id}/domains', {
    key: u.api_key,
    params: { app_id: appId },
    body: { hostname: 'shop.caddy-one.test' },
  });

  // pending: the platform says no, so Caddy has no certificate to offer
  await refused('shop.caddy-one.test');
  await operatorVerify(h.deps, 'shop.caddy-one.test');
  const ok = await fetchTls('shop.caddy-one.test');
  assert.is(ok.status, 200, `${ok.status} ${ok.body}\n${caddyLog.slice(-2000)}`);
  assert.ok(ok.body.includes('served over https'));
  assert.ok(/Caddy Local Authority/.test(ok.issuer), ok.issuer);
  // an unknown name: no certificate, the handshake fails
  await refused('evil.caddy-one.test');
  // the app's canonical origin is allowed too
  const canonical = await fetchTls(`${appId}.apps.localhost`);
  assert.is(canonical.status, 200);
  assert.ok(canonical.body.includes('served over https'));
});

test.after(async () => {
  caddy?.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 200));
  await upstream.close();
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});
test.run();

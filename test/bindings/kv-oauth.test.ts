/**
 * A KV app whose storage code no one here wrote: an OAuth 2.1 server made with Cloudflare's
 * `@cloudflare/workers-oauth-provider` (pinned devDependency), which keeps clients, grants and
 * tokens in `env.OAUTH_KV` (puts with TTLs, JSON gets, prefix lists, deletes) and wraps each
 * grant's props with AES-KW and AES-GCM. The one-Worker shape its README gives, with an
 * `/authorize` that approves at once, published unchanged; a client registers, authorizes with
 * PKCE, exchanges the code, calls the API, refreshes, and is refused with a used code, and every
 * answer equals the same build's under Miniflare (tokens and ids by their kind, the origin named).
 */
import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cliFor, linkedApp, writeProject } from '../_lib/cli.ts';
import { bundleModule } from '../_lib/esbuild.ts';
import { createHarness, listen, newUser } from '../_lib/harness.ts';
import { startMiniflare } from '../_lib/miniflare.ts';
import { assertSameAnswers } from '../_lib/same-answers.ts';
import { eventsOf } from '../_lib/apps.ts';

const h = await createHarness();
const live = await listen(h.server);
const u = await newUser(h);
const work = path.resolve('.data', 'test-scratch', `kv-oauth-${process.pid}`);
const { cli } = cliFor({ url: live.url, key: u.api_key, work });

const ENTRY = `import { OAuthProvider } from '@cloudflare/workers-oauth-provider';

// the application's part: an /authorize that signs in "ada" and approves what is asked
const defaultHandler = {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    const bearer = (request.headers.get('authorization') ?? '').replace(/^Bearer /, '');
    // the helpers an app's own pages use: a token's grant and props, the user's grants
    if (path === '/whoami') return Response.json(await env.OAUTH_PROVIDER.unwrapToken(bearer));
    if (path === '/grants') return Response.json(await env.OAUTH_PROVIDER.listUserGrants('ada'));
    if (path !== '/authorize') return new Response('Not found', { status: 404 });
    const authRequest = await env.OAUTH_PROVIDER.parseAuthRequest(request);
    const { redirectTo } = await env.OAUTH_PROVIDER.completeAuthorization({
      request: authRequest,
      userId: 'ada',
      metadata: { label: 'test' },
      scope: authRequest.scope,
      props: { userId: 'ada', name: 'Ada Lovelace' },
    });
    return Response.redirect(redirectTo, 302);
  },
};

const apiHandler = {
  async fetch(request, env, ctx) {
    return Response.json({ path: new URL(request.url).pathname, props: ctx.props });
  },
};

export default new OAuthProvider({
  apiRoute: '/api/',
  apiHandler,
  defaultHandler,
  authorizeEndpoint: '/authorize',
  tokenEndpoint: '/oauth/token',
  clientRegistrationEndpoint: '/oauth/register',
  scopesSupported: ['read', 'write'],
  // the API's canonical name, as a deployed app names its own https origin (never fetched)
  resourceMetadata: { resource: 'https://auth.example', authorization_servers: ['https://auth.example'] },
});
`;

const VOLATILE = new Set([
  'client_id',
  'client_secret',
  'access_token',
  'refresh_token',
  'code',
  'client_id_issued_at',
  'client_secret_issued_at',
  'client_secret_expires_at',
  'id',
  'grantId',
  'clientId',
  'createdAt',
  'expiresAt',
]);
/** An answer with its tokens and ids by their kind, and the origin it was served on named ORIGIN. */
function steady(v: unknown, origin: string): unknown {
  if (typeof v === 'string') return v.split(origin).join('ORIGIN');
  if (Array.isArray(v)) return v.map((x) => steady(x, origin));
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => [k, VOLATILE.has(k) ? typeof x : steady(x, origin)]),
    );
  return v;
}

const REDIRECT = 'http://127.0.0.1:9/callback';
type Answer = {
  label: string;
  status: number;
  body: unknown;
  location?: unknown;
  challenge?: unknown;
};

/** The client's whole flow against one host; `origin` is the origin that host serves on. */
async function flow(
  fetchOf: (p: string, init?: RequestInit) => Promise<Response>,
  origin: string,
): Promise<Answer[]> {
  const out: Answer[] = [];
  const record = async (label: string, res: Response) => {
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    const location = res.headers.get('location');
    const answer: Answer = { label, status: res.status, body: steady(body, origin) };
    if (location) {
      const l = new URL(location);
      answer.location = steady(
        { at: `${l.origin}${l.pathname}`, ...Object.fromEntries(l.searchParams) },
        origin,
      );
    }
    const challenge = res.headers.get('www-authenticate');
    if (challenge) answer.challenge = steady(challenge, origin);
    out.push(answer);
    return { body, location };
  };
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  await record('metadata', await fetchOf('/.well-known/oauth-authorization-server'));
  const registered = (
    await record(
      'register',
      await fetchOf('/oauth/register', {
        method: 'POST',
        body: JSON.stringify({
          redirect_uris: [REDIRECT],
          client_name: 'Test client',
          token_endpoint_auth_method: 'client_secret_post',
        }),
        headers: { 'content-type': 'application/json' },
      }),
    )
  ).body as { client_id: string; client_secret: string };
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const authorize = new URLSearchParams({
    response_type: 'code',
    client_id: registered.client_id,
    redirect_uri: REDIRECT,
    state: 'xyz',
    scope: 'read',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const { location } = await record(
    'authorize',
    await fetchOf(`/authorize?${authorize}`, { redirect: 'manual' }),
  );
  if (!location) throw new Error(`no redirect from /authorize: ${JSON.stringify(out.at(-1))}`);
  const code = new URL(location).searchParams.get('code')!;
  const client = { client_id: registered.client_id, client_secret: registered.client_secret };
  const exchange = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    ...client,
  };
  const tokens = (await record('token', await fetchOf('/oauth/token', form(exchange)))).body as {
    access_token: string;
    refresh_token: string;
  };
  const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
  await record('whoami', await fetchOf('/whoami', bearer(tokens.access_token)));
  await record('grants', await fetchOf('/grants'));
  // the API checks a token's audience against the request's origin: here not the resource's
  await record('api', await fetchOf('/api/me', bearer(tokens.access_token)));
  await record('api without a token', await fetchOf('/api/me'));
  await record('api with a wrong token', await fetchOf('/api/me', bearer('nope:nope:nope')));
  const refreshed = (
    await record(
      'refresh',
      await fetchOf(
        '/oauth/token',
        form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...client }),
      ),
    )
  ).body as { access_token: string };
  await record('whoami after refresh', await fetchOf('/whoami', bearer(refreshed.access_token)));
  await record(
    'wrong secret',
    await fetchOf('/oauth/token', form({ ...exchange, client_secret: 'wrong' })),
  );
  // a code used twice revokes its grant and every token of it (OAuth 2.1)
  await record('code used twice', await fetchOf('/oauth/token', form(exchange)));
  await record('whoami after revoke', await fetchOf('/whoami', bearer(refreshed.access_token)));
  await record('grants after revoke', await fetchOf('/grants'));
  return out;
}

test('an OAuth server on workers-oauth-provider keeps its state in KV as under Miniflare', async () => {
  const dir = await writeProject(work, 'oauth', {
    'wrangler.jsonc': JSON.stringify({
      name: 'oauth',
      main: 'src/index.js',
      compatibility_date: '2025-04-01',
      kv_namespaces: [{ binding: 'OAUTH_KV', id: '00000000000000000000000000000000' }],
    }),
    'src/index.js': ENTRY,
  });
  const r = await cli(['publish'], { cwd: dir });
  assert.is(r.code, 0, r.stdout + r.stderr);
  const appId = await linkedApp(dir);
  const host = `${appId}.apps.localhost`;
  const bundled = path.join(work, 'oauth.bundle.js');
  await writeFile(bundled, await bundleModule(ENTRY, ['cloudflare:*']));
  const control = await startMiniflare(bundled, { kvNamespaces: ['OAUTH_KV'] });
  try {
    const theirs = await flow((p, init) => control.fetch(p, init), 'http://localhost');
    const mine = await flow(
      async (p, init) => h.server.request(`http://${host}${p}`, init),
      `http://${host}`,
    ).catch(async (e) => {
      const errors = await eventsOf(h, u.api_key, appId, 'runtime.request_error');
      throw new Error(`${e.message}: ${JSON.stringify(errors[0]?.metadata)}`);
    });
    for (let i = 0; i < theirs.length; i++) {
      if (mine[i]?.status !== theirs[i]!.status && mine[i]!.status >= 500) {
        const errors = await eventsOf(h, u.api_key, appId, 'runtime.request_error');
        assert.unreachable(`${theirs[i]!.label}: ${JSON.stringify(errors[0]?.metadata)}`);
      }
      assertSameAnswers(theirs[i]!.label, mine[i], theirs[i]);
    }
  } finally {
    await control.stop();
  }
  // the state is the app's KV namespace: the client stays; the code's second use revoked the
  // grant and its tokens
  const keys = await h.api('GET /v0/apps/{app_id}/kv/{namespace}/keys', {
    key: u.api_key,
    params: { app_id: appId, namespace: 'OAUTH_KV' },
  });
  assert.equal([...new Set(keys.keys.map((k) => k.name.split(':')[0]))], ['client']);
});

test.after(async () => {
  await live.close();
  await h.close();
});

test.run();

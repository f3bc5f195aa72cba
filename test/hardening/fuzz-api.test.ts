/**
 * Every operation in /openapi.json, given hostile input: malformed and wrongly typed JSON bodies
 * (built from each operation's own request schema, one field broken at a time), hostile path
 * parameters and query values. Whatever it is sent, an operation answers a status it declares
 * (the harness checks each answer against /openapi.json), never a 5xx, and every error is the
 * contract's body: `{ error: { code, message } }`. The operations run against real objects (an
 * app with resources, a secret, a slug, a domain), so validation is reached past the 404s, and the
 * deleting ones run last.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, withResources } from '../_lib/bundles.ts';
import { startDns } from '../_lib/dns-server.ts';
import { type Called, createHarness, newUser } from '../_lib/harness.ts';
import { setPlan } from '../../src/plans/operator.ts';

const dns = await startDns(); // domain verification asks this loopback server, never the machine's resolver
const h = await createHarness({ PLATFORM_DNS_SERVERS: dns.server });
const u = await newUser(h, 'fuzz');
const key = u.api_key;
await setPlan(h.deps, { accountId: u.account_id, planKey: 'business' }); // slugs, domains, analytics

const server = `export default { fetch() { return new Response('ok'); }, job() {} };`;
const published = await h.call('PUT', '/v0/apps', {
  key,
  body: withResources(
    {
      data: { collections: { notes: { fields: { body: { type: 'string' } } } } },
      jobs: { nightly: { trigger: 'schedule', schedule: 'daily' } },
    },
    {
      runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
      files: [
        file('public/index.html', '<h1>hi</h1>'),
        file('server.js', server, 'text/javascript'),
      ],
    },
  ),
});
assert.is(published.status, 200, published.text);
const appId: string = published.body.app_id;
assert.is(
  (await h.call('PUT', `/v0/apps/${appId}/secrets/FUZZ`, { key, body: { value: 's' } })).status,
  200,
);
const slug = await h.call('POST', `/v0/apps/${appId}/slugs`, {
  key,
  body: { slug: `fuzz-${process.pid}` },
});
assert.is(slug.status, 201, slug.text);
const domain = await h.call('POST', `/v0/apps/${appId}/domains`, {
  key,
  body: { hostname: `fuzz${process.pid}.example.test` },
});
assert.is(domain.status, 201, domain.text);
const spareKey = await h.call('POST', '/v0/auth/api-keys', { key, body: { name: 'spare' } });
assert.is(spareKey.status, 201, spareKey.text);

/** A real value for each path parameter, so an operation gets past "not found" to its validation. */
const real: Record<string, string> = {
  account_id: u.account_id,
  user_id: u.user_id,
  app_id: appId,
  api_key_id: spareKey.body.id,
  name: 'FUZZ',
  slug: slug.body.slug,
  hostname: domain.body.hostname,
  route_id: slug.body.route_id,
  job_name: 'nightly',
  invitation_id: 'inv_fuzz',
};

const LONG = 'x'.repeat(100_000);
/** Values for a path segment, written into the path as they are (some are deliberately bad escapes). */
const hostilePathValues = [
  '%00',
  '%2500',
  'a%0Ab',
  '%2e%2e',
  '%ff%fe',
  '..%2F..%2Fetc',
  'x'.repeat(600),
  "'%3B drop table apps%3B--",
  '__proto__',
  '%C3%A9',
  '-1',
  '9'.repeat(40),
  '%20',
];
const hostileQueryValues = [
  '',
  'x',
  '-1',
  '0',
  '1e400',
  '99999999999999999999',
  '%00',
  '%ff',
  'x'.repeat(5000),
  '__proto__',
  '[object Object]',
];
/** Replacements for one field of an otherwise plausible body. */
const badValues: unknown[] = [
  null,
  12345,
  -1,
  1e308,
  0.5,
  true,
  'x',
  '',
  LONG,
  '\u0000',
  {},
  [],
  [null],
  { __proto__: 1 },
  '💥'.repeat(50),
];
const rawBodies = ['{', 'null', '[]', '"x"', '1', 'true', '{"a":', '\u0000', '{}'];

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  minimum?: number;
  minLength?: number;
  pattern?: string;
};
type Operation = {
  method: string;
  template: string;
  params: { name: string; in: string }[];
  body?: Schema;
};

const doc = (await h.call('GET', '/openapi.json')).body as {
  paths: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, Schema> };
};
const resolve = (s: Schema): Schema =>
  s.$ref ? resolve(doc.components!.schemas![s.$ref.split('/').pop()!]!) : s;

/** A plausible value for a schema: what a client that read the schema would send (it need not pass every rule). */
function sample(schema: Schema, depth = 0): unknown {
  const s = resolve(schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const alt = s.anyOf ?? s.oneOf ?? s.allOf;
  if (alt) return sample(alt.find((a) => resolve(a).type !== 'null') ?? alt[0]!, depth);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
  if (depth > 4) return null;
  switch (type) {
    case 'object':
      return Object.fromEntries(
        Object.entries(s.properties ?? {}).map(([k, v]) => [k, sample(v, depth + 1)]),
      );
    case 'array':
      return s.items ? [sample(s.items, depth + 1)] : [];
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string':
      return s.format === 'email' ? 'fuzz@example.com' : 'fuzz'.padEnd(s.minLength ?? 0, 'z');
    default:
      return 'fuzz';
  }
}

/** The sample with one field (top level or one below) replaced, for every field and every bad value. */
function brokenBodies(schema: Schema): unknown[] {
  const base = sample(schema);
  const out: unknown[] = [base, { ...(base as object), unknown_field: 1 }];
  if (!base || typeof base !== 'object' || Array.isArray(base)) return out;
  for (const [k, v] of Object.entries(base)) {
    for (const bad of badValues) out.push({ ...base, [k]: bad });
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const inner of Object.keys(v))
        for (const bad of [null, 1, LONG, {}]) out.push({ ...base, [k]: { ...v, [inner]: bad } });
    }
    if (Array.isArray(v) && v[0] && typeof v[0] === 'object') {
      for (const inner of Object.keys(v[0]))
        for (const bad of [null, 1, LONG, []])
          out.push({ ...base, [k]: [{ ...v[0], [inner]: bad }] });
    }
  }
  return out;
}

const operations: Operation[] = [];
for (const [template, methods] of Object.entries(doc.paths)) {
  for (const [method, op] of Object.entries(methods)) {
    if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
    operations.push({
      method: method.toUpperCase(),
      template,
      params: op.parameters ?? [],
      body: op.requestBody?.content?.['application/json']?.schema,
    });
  }
}
// Deleting operations last, the app itself at the very end, so the others meet real objects.
const rank = (o: Operation) =>
  o.method !== 'DELETE'
    ? 0
    : o.template === '/v0/apps/{app_id}'
      ? 3
      : o.template.startsWith('/v0/platform')
        ? 2
        : 1;
operations.sort((a, b) => rank(a) - rank(b));

const fill = (template: string, override?: [string, string]) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) =>
    override && override[0] === name ? override[1] : encodeURIComponent(real[name] ?? 'fuzz'),
  );

/**
 * What is wrong with an answer to hostile input, if anything: a 5xx (billing that is not set up is the one declared
 * 503), or an error that is JSON but not the contract's `{ error: { code, message } }`.
 */
function breach(r: Called, what: string): string | undefined {
  if (r.status >= 500 && r.body?.error?.code !== 'billing_not_configured') return what;
  const json = /json/.test(r.headers.get('content-type') ?? '');
  if (
    r.status >= 400 &&
    json &&
    (typeof r.body?.error?.code !== 'string' || typeof r.body?.error?.message !== 'string')
  )
    return `not the error body: ${what}`;
  return undefined;
}

const failures: string[] = [];
let sent = 0;
async function probe(
  label: string,
  method: string,
  path: string,
  init: { body?: unknown; rawBody?: string; headers?: Record<string, string> },
): Promise<void> {
  sent++;
  let r;
  try {
    const headers = {
      ...(init.rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    };
    r = await h.call(method, path, {
      key,
      headers,
      ...(init.rawBody !== undefined
        ? { rawBody: init.rawBody }
        : init.body !== undefined
          ? { body: init.body }
          : {}),
    });
  } catch (err) {
    failures.push(`${label}: ${(err as Error).message}`); // the harness's contract check, or a throw out of the server
    return;
  }
  const what = `${label} → ${r.status} ${r.text.slice(0, 200)}`;
  const broke = breach(r, what);
  if (broke) failures.push(broke);
}

test('every operation answers hostile bodies, path parameters and queries with a declared 4xx and the error body, never a 5xx', async () => {
  assert.ok(operations.length >= 50, `the document lists the operations (${operations.length})`);
  for (const op of operations) {
    const path = fill(op.template);
    const label = (what: string) => `${op.method} ${op.template} (${what})`;
    if (op.body) {
      for (const raw of rawBodies)
        await probe(label(`raw body ${JSON.stringify(raw)}`), op.method, path, { rawBody: raw });
      for (const body of brokenBodies(op.body))
        await probe(label(`body ${JSON.stringify(body).slice(0, 120)}`), op.method, path, { body });
      const plausible = JSON.stringify(sample(op.body));
      for (const type of [
        'text/plain',
        'application/json; charset=latin1',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded',
        '',
        'application/json, text/plain',
      ]) {
        await probe(label(`content-type ${JSON.stringify(type)}`), op.method, path, {
          rawBody: plausible,
          headers: { 'content-type': type },
        });
      }
    }
    for (const account of ['%00', 'acct_nope', 'x'.repeat(300), '', u.account_id.toUpperCase()]) {
      await probe(label(`x-platform-account-id ${account.slice(0, 20)}`), op.method, path, {
        body: op.body ? sample(op.body) : undefined,
        headers: { 'x-platform-account-id': account },
      });
    }
    for (const p of op.params.filter((p) => p.in === 'path')) {
      for (const value of hostilePathValues)
        await probe(
          label(`${p.name}=${value.slice(0, 40)}`),
          op.method,
          fill(op.template, [p.name, value]),
          { body: op.body ? sample(op.body) : undefined },
        );
    }
    for (const p of op.params.filter((p) => p.in === 'query')) {
      for (const value of hostileQueryValues)
        await probe(
          label(`?${p.name}=${value.slice(0, 40)}`),
          op.method,
          `${path}?${p.name}=${value}`,
          {},
        );
      await probe(label(`?${p.name} twice`), op.method, `${path}?${p.name}=a&${p.name}=b`, {});
    }
  }
  assert.ok(sent > 1000, `sent ${sent} requests`);
  assert.equal(
    failures,
    [],
    `${failures.length} of ${sent} answers broke the contract:\n${failures.slice(0, 40).join('\n')}`,
  );
});

test("an app origin's reserved routes (app users, data, files, webhooks) answer hostile input with a 4xx and the error body", async () => {
  const source = `export default { fetch() { return new Response('ok'); }, webhook() { return new Response('got it'); } };`;
  const made = await h.call('PUT', '/v0/apps', {
    key,
    body: withResources(
      {
        auth: { mode: 'app_users', public_signup: true },
        data: {
          collections: {
            notes: {
              fields: { title: 'string', n: 'number', done: 'boolean' },
              access: { read: 'public', write: 'public' },
            },
          },
        },
        files: { stores: { pics: { public: true } } },
        webhooks: { hook: { provider: 'none' } },
      },
      {
        runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
        files: [file('public/index.html', 'x'), file('server.js', source, 'text/javascript')],
      },
    ),
  });
  assert.is(made.status, 200, made.text);
  const host = `${made.body.app_id}.${h.config.hosts.apps}`;
  const row = await h.call('POST', '/_platform/data/notes', {
    host,
    body: { title: 't', n: 1, done: false },
  });
  assert.is(row.status, 201, row.text);
  const origin = `http://${host}`;
  const failuresHere: string[] = [];
  let count = 0;
  const send = async (
    method: string,
    path: string,
    init: { body?: unknown; rawBody?: string; contentType?: string } = {},
  ) => {
    count++;
    const headers: Record<string, string> = { origin }; // a same-origin browser call
    if (init.rawBody !== undefined)
      headers['content-type'] = init.contentType ?? 'application/json';
    const r = await h.call(method, path, {
      host,
      headers,
      ...(init.rawBody !== undefined
        ? { rawBody: init.rawBody }
        : init.body !== undefined
          ? { body: init.body }
          : {}),
    });
    const what = `${method} ${path.slice(0, 120)} ${init.rawBody !== undefined ? `raw ${JSON.stringify(init.rawBody).slice(0, 60)}` : init.body !== undefined ? JSON.stringify(init.body).slice(0, 100) : ''} → ${r.status} ${r.text.slice(0, 160)}`;
    const broke = breach(r, what);
    if (broke) failuresHere.push(broke);
  };
  const bodies = (base: Record<string, unknown>) => [
    base,
    ...Object.keys(base).flatMap((k) => badValues.map((bad) => ({ ...base, [k]: bad }))),
  ];
  for (const path of ['/_platform/auth/signup', '/_platform/auth/login']) {
    for (const raw of rawBodies) await send('POST', path, { rawBody: raw });
    await send('POST', path, {
      rawBody: 'email=a&password=b',
      contentType: 'application/x-www-form-urlencoded',
    });
    for (const body of bodies({ email: 'fuzz@example.com', password: 'correct horse battery' }))
      await send('POST', path, { body });
  }
  for (const path of ['/_platform/auth/verify', '/_platform/auth/invite/accept']) {
    for (const raw of rawBodies) await send('POST', path, { rawBody: raw });
    for (const body of bodies({ token: 'fuzz', password: 'correct horse battery' }))
      await send('POST', path, { body });
  }
  for (const path of ['/_platform/auth/session', '/_platform/auth/logout'])
    await send(path.endsWith('logout') ? 'POST' : 'GET', path);
  for (const raw of rawBodies) await send('POST', '/_platform/data/notes', { rawBody: raw });
  for (const body of bodies({ title: 't', n: 1, done: true })) {
    await send('POST', '/_platform/data/notes', { body });
    await send('PATCH', `/_platform/data/notes/${row.body.id}`, { body });
  }
  const queries = [
    'limit',
    'cursor',
    'title',
    'n',
    'done',
    'id',
    'created_at',
    'nope',
    '__proto__',
  ];
  for (const q of queries)
    for (const value of hostileQueryValues)
      await send('GET', `/_platform/data/notes?${q}=${value}`);
  for (const value of hostilePathValues) {
    await send('GET', `/_platform/data/${value}`);
    await send('GET', `/_platform/data/notes/${value}`);
    await send('PATCH', `/_platform/data/notes/${value}`, { body: { title: 'x' } });
    await send('DELETE', `/_platform/data/notes/${value}`);
    await send('GET', `/_platform/files/pics/${value}`);
    await send('GET', `/_platform/files/${value}/file_x`);
    await send('POST', `/_platform/webhooks/${value}`, { body: { a: 1 } });
  }
  for (const raw of rawBodies) await send('POST', '/_platform/webhooks/hook', { rawBody: raw });
  assert.ok(count > 400, `sent ${count} requests`);
  assert.equal(
    failuresHere,
    [],
    `${failuresHere.length} of ${count} answers broke the contract:\n${failuresHere.slice(0, 40).join('\n')}`,
  );
});

test('console and docs pages answer hostile paths and queries with a page or a 4xx, never a 5xx', async () => {
  const pages = [
    '/',
    '/apps/{x}',
    '/apps/{x}/releases',
    '/apps/{x}/analytics',
    '/apps/{x}/domains',
    '/apps/{x}/events',
    '/apps/{x}/secrets',
    '/auth/confirm',
    '/device',
    '/sign-in',
    '/signup',
    '/assets/{x}',
  ];
  const docs = ['/', '/reference', '/guides/{x}', '/schemas/{x}', '/assets/{x}'];
  const bad: string[] = [];
  let count = 0;
  for (const [host, paths] of [
    [h.config.hosts.console, pages],
    [h.config.hosts.docs, docs],
  ] as const) {
    for (const template of paths) {
      for (const value of [...hostilePathValues, appId]) {
        for (const query of [
          '',
          '?token=%00',
          '?next=//evil.example',
          `?user_code=${'x'.repeat(3000)}`,
          '?range=%ff',
        ]) {
          count++;
          const r = await h.call('GET', template.replace('{x}', value) + query, {
            host,
            key: null,
          });
          const broke = breach(
            r,
            `${host} ${template.replace('{x}', value.slice(0, 40))}${query.slice(0, 40)} → ${r.status} ${r.text.slice(0, 160)}`,
          );
          if (broke) bad.push(broke);
        }
      }
    }
  }
  assert.ok(count > 500, `sent ${count} requests`);
  assert.equal(bad, [], bad.join('\n'));
});

test('after all that, the service still answers and the app still serves', async () => {
  const health = await h.call('GET', '/healthz');
  assert.is(health.status, 200);
  const other = await newUser(h, 'after-fuzz');
  const again = await h.call('PUT', '/v0/apps', { key: other.api_key, body: withResources({}) });
  assert.is(again.status, 200, again.text);
  const page = await h.call('GET', '/', { host: `${again.body.app_id}.${h.config.hosts.apps}` });
  assert.is(page.status, 200, page.text);
});

test.after(async () => {
  await h.close();
  await dns.close();
});

test.run();

/**
 * Shared test harness: a server built exactly as `npm start` builds it, on this file's own
 * database (cloned from the migrated template by scripts/test.ts), plus fixtures and helpers.
 */
import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config.ts';
import { createDb, createPool } from '../../src/db/database.ts';
import type { Deps } from '../../src/deps.ts';
import { createLogger } from '../../src/logger.ts';
import { listenHttp } from '../../src/http/serve.ts';
import { createSignals } from '../../src/signals.ts';
import { createServer, type Server } from '../../src/server.ts';
import { publicUrl } from '../../src/config.ts';
import { generateOpenApi } from '../../src/openapi/generate.ts';
import { addMember, createUser } from '../../src/users/service.ts';
import { createContractChecker, saveRecorded, type ContractChecker } from './contract.ts';
import {
  createV0Client,
  type Answer,
  type CallOptions as V0CallOptions,
  type ResponseOf,
  type Route,
} from '../../src/client/v0.ts';

export type Harness = {
  deps: Deps;
  config: Config;
  server: Server;
  /** Calls the server in-process (`server.request`), by default on the API host: for app origins, pages and raw input. */
  call(method: string, path: string, options?: CallOptions): Promise<Called>;
  /** Calls a documented route through the typed client (src/client/v0.ts); the answer is typed, success or error. */
  answer<K extends Route>(route: K, ...options: OptionsFor<K>): Promise<Answer<K>>;
  /** The same, for a call that must succeed: its typed body (anything else fails the test with the status and error). */
  api<K extends Route>(route: K, ...options: OptionsFor<K>): Promise<ResponseOf<K>>;
  close(): Promise<void>;
};

/** `client`: the peer address the server sees (abuse limits are keyed on it); unset, it sees none. */
export type CallOptions = {
  key?: string | null;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  host?: string;
  account?: string;
  client?: string;
};
export type Called = { status: number; headers: Headers; body: any; text: string };
/** The typed client's options plus who calls: `key`, `account` and the peer address (`client`). */
export type ApiOptions<K extends Route> = V0CallOptions<K> & {
  key?: string | null;
  account?: string;
  client?: string;
};
type OptionsFor<K extends Route> = [ParamsOf<K>] extends [never]
  ? [ApiOptions<K>?]
  : [ApiOptions<K>];
type ParamsOf<K extends string> = K extends `${string}{${infer P}}${infer Rest}`
  ? P | ParamsOf<Rest>
  : never;

/**
 * Tests run on Free with room to spare (test/fixtures/plans-roomy.json: more apps and requests,
 * webhooks), so a test about anything else is not cut short by a plan limit; Free's CPU and
 * everything else stay as built in. Plan tests pass `PLATFORM_PLANS_FILE: ''` for the real catalogue.
 */
export const ROOMY_PLANS = path.resolve('test/fixtures/plans-roomy.json');

/**
 * Free with 50 ms of CPU a call, for tests whose guest code runs away on purpose: the deadline and
 * the watchdog are the same mechanism at any length, and Free's real second would hold each
 * runaway call for 15 s of a core (the watchdog allows three times a module's load budget).
 */
export const SHORT_CPU_PLANS = path.resolve('test/fixtures/plans-short-cpu.json');

export function testConfig(env: Record<string, string> = {}): Config {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set: run tests with `npm test`.');
  return loadConfig({
    DATABASE_URL: url,
    PLATFORM_SECRETS_KEY: randomBytes(32).toString('hex'),
    PLATFORM_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PLATFORM_DATA_DIR: '.data/test-scratch',
    PORT: '8787',
    PLATFORM_PLANS_FILE: ROOMY_PLANS,
    ...env,
  });
}

export async function createHarness(env: Record<string, string> = {}): Promise<Harness> {
  const config = testConfig(env);
  const pool = createPool(config.databaseUrl!, 10);
  const db = createDb(pool);
  const deps: Deps = {
    config,
    pool,
    db,
    log: createLogger(config.logLevel),
    secretsKey: Buffer.from(config.secretsKey!, 'hex'),
    signals: createSignals(),
  };
  const server = createServer(deps);
  const contract = holdToContract(server, config);
  async function answer<K extends Route>(route: K, options?: ApiOptions<K>): Promise<Answer<K>> {
    // runtime events are written just after answers (src/events/writer.ts): a test reads what its requests caused
    await server.runtime.events.flush();
    const { key, account, client, ...rest } = options ?? ({} as ApiOptions<K>);
    const env = client ? { incoming: { socket: { remoteAddress: client } } } : undefined;
    const v0 = createV0Client({
      baseUrl: `http://${config.hosts.api}`,
      apiKey: key,
      accountId: account,
      fetch: async (url, init) => server.request(url, init, env),
    });
    return v0.call(route, rest as never);
  }
  return {
    deps,
    config,
    server,
    answer: answer as Harness['answer'],
    api: (async (route: Route, options?: ApiOptions<Route>) => {
      const a = await answer(route, options);
      if (!a.ok) throw new Error(`${route} answered ${a.status}: ${a.text}`);
      return a.body;
    }) as Harness['api'],
    async call(method, path, options = {}) {
      await server.runtime.events.flush(); // as in answer()
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      if (options.account) headers['x-platform-account-id'] = options.account;
      let body: BodyInit | undefined = options.rawBody;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const host = options.host ?? config.hosts.api;
      const env = options.client
        ? { incoming: { socket: { remoteAddress: options.client } } }
        : undefined;
      const res = await server.request(`http://${host}${path}`, { method, headers, body }, env);
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async close() {
      await server.close();
      await db.destroy();
      contract.finish();
    },
  };
}

/**
 * Wraps `server.fetch` so every JSON answer from the API and console hosts' documented routes is
 * checked against /openapi.json (test/_lib/contract.ts). A mismatch throws out of app.request(),
 * is printed, and fails the test file at exit even when it travelled over real HTTP.
 */
function holdToContract(server: Server, config: Config): { finish(): void } {
  const recordDir = process.env.PLATFORM_RECORD_EXAMPLES;
  let checker: ContractChecker | undefined;
  const mismatches: string[] = [];
  const hosts = new Set([config.hosts.api, config.hosts.console, 'localhost', '127.0.0.1']);
  const inner = server.fetch;
  server.fetch = (async (req: Request, ...rest: unknown[]) => {
    const sent =
      recordDir && /^application\/json/i.test(req.headers.get('content-type') ?? '')
        ? req
            .clone()
            .text()
            .catch(() => undefined)
        : undefined; // a body the client aborts is simply not recorded
    const res = await (inner as (r: Request, ...a: unknown[]) => Response | Promise<Response>)(
      req,
      ...rest,
    );
    const url = new URL(req.url);
    if (
      !hosts.has(url.hostname) ||
      !(
        url.pathname.startsWith('/v0/') ||
        url.pathname.startsWith('/schemas/') ||
        url.pathname.startsWith('/_internal/') ||
        url.pathname === '/healthz' ||
        url.pathname === '/openapi.json'
      )
    )
      return res;
    checker ??= createContractChecker(
      generateOpenApi(server.api, { serverUrl: publicUrl(config, config.hosts.api) }),
      { record: Boolean(recordDir) },
    );
    const isJson = /^application\/json/i.test(res.headers.get('content-type') ?? '');
    const text = isJson && req.method !== 'HEAD' ? await res.clone().text() : '';
    const problem = checker.check(
      req.method,
      url.pathname,
      res.status,
      text ? JSON.parse(text) : undefined,
    );
    if (sent && res.ok) {
      try {
        const body = await sent;
        if (body !== undefined) checker.recordRequest(req.method, url.pathname, JSON.parse(body));
      } catch {
        // not JSON after all: nothing to keep
      }
    }
    if (problem) {
      mismatches.push(problem);
      console.error(`contract mismatch: ${problem}`);
      process.exitCode = 1;
      throw new Error(`contract mismatch: ${problem}`);
    }
    return res;
  }) as typeof server.fetch;
  return {
    finish() {
      if (recordDir && checker) saveRecorded(recordDir, checker);
      if (mismatches.length)
        console.error(
          `${mismatches.length} response(s) did not match /openapi.json:\n${mismatches.join('\n')}`,
        );
    },
  };
}

let counter = 0;
export function uniqueEmail(tag = 'user'): string {
  return `${tag}-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}@example.com`;
}

/** A fresh user with their own account (owner) and an API key. */
export async function newUser(h: Harness, tag?: string) {
  return createUser(h.deps.db, { email: uniqueEmail(tag) });
}

/** A user added to `accountId` with `role`, with their own API key. */
export async function newMember(
  h: Harness,
  accountId: string,
  role: 'owner' | 'admin' | 'developer' | 'viewer',
) {
  return addMember(h.deps.db, { accountId, email: uniqueEmail(role), role });
}

/** A loopback port nothing listens on now (for a harness whose public URLs must name its real port). */
export { freePort } from '../../src/lib/ports.ts';

/** Starts a real HTTP listener on a loopback port (a free one unless given) for tests that need real sockets; with a config, its server timeouts as `npm start` sets them. */
export async function listen(
  server: Server,
  port = 0,
  config?: Config,
): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const l = await listenHttp(server.fetch, { port, hostname: '127.0.0.1', config });
  return {
    url: `http://127.0.0.1:${l.port}`,
    port: l.port,
    close: () => {
      l.hurry();
      return l.close();
    },
  };
}

/** A request on the wire with a chosen Host header (fetch() cannot set one), body read as text. */
export function wireRequest(
  port: number,
  hostHeader: string,
  path: string,
  options: { method?: string; agent?: http.Agent } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: { host: hostHeader },
        agent: options.agent,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

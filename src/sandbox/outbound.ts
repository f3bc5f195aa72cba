/**
 * App code's outbound `fetch`, carried out by the worker with undici. Safe by default: only http
 * and https; the destination is checked on the address actually connected to (a DNS answer is
 * checked at connect time, so a name cannot rebind to an inside address between check and use),
 * and again on every redirect hop, which are followed here one by one. Loopback, private,
 * link-local (169.254.169.254 too), unique-local, CGNAT, multicast, unspecified, reserved and the
 * IPv6 spellings of IPv4 ones are refused, as are the platform's own hosts; the operator opens
 * exceptions with PLATFORM_FETCH_ALLOW. The limits are per invocation (`OUTBOUND`).
 *
 * Names app code chose are resolved by asking DNS servers directly (c-ares, on the event loop, with
 * a timeout), never with `dns.lookup`: that is the system's getaddrinfo on libuv's thread pool, four
 * threads the whole process shares, and a name whose servers never answer holds a thread for the
 * resolver's whole timeout; six such fetches in flight would stall every file read, crypto
 * operation and other app's look-up. `localhost` names are loopback without asking (RFC 6761);
 * names the operator allowed are trusted and looked up the system's way (so /etc/hosts applies).
 */
import { lookup as dnsLookup, Resolver, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import type { Agent, BodyInit as UndiciBody } from 'undici';
import { readLimited } from '../lib/streams.ts';

/** Per-invocation limits on outbound requests: one place, so plans can change them. */
export const OUTBOUND = {
  maxRequests: 50,
  maxInFlight: 6,
  maxRedirects: 20,
  maxResponseBytes: 10 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
} as const;

/** What the operator allows and what is always refused (the platform's own host names). */
export type FetchPolicy = {
  /** host names, IP addresses or CIDR blocks (PLATFORM_FETCH_ALLOW) */
  allow: string[];
  /** host names refused with all their subdomains (the platform's API, console, docs and apps hosts) */
  denyHosts: string[];
  /** DNS servers to ask (PLATFORM_DNS_SERVERS); the system's when empty */
  dnsServers?: string[];
};

/** How long one DNS question may take at first (c-ares doubles it for the retry), and how often it is asked: a zone that never answers fails in ~5 s, inside a call's 10 s. */
export const DNS = { timeoutMs: 1500, tries: 2 } as const;

export type OutboundRequest = {
  url: string;
  method: string;
  headers: [string, string][];
  body?: ArrayBuffer | ReadableStream<Uint8Array>;
  redirect: 'follow' | 'manual' | 'error';
};
export type OutboundHead = {
  status: number;
  statusText: string;
  headers: [string, string][];
  url: string;
  redirected: boolean;
};
/** The head, and the body as it arrives (read by the app chunk by chunk or whole). */
export type OutboundResponse = OutboundHead & {
  body: ReadableStreamDefaultReader<Uint8Array> | null;
};

/** A refused or failed fetch: becomes a TypeError in app code. */
export class FetchRefused extends Error {}

const WORDS: Record<string, string> = {
  loopback: 'loopback address',
  private: 'private address',
  linkLocal: 'link-local address',
  uniqueLocal: 'unique-local address',
  carrierGradeNat: 'shared (CGNAT) address',
  multicast: 'multicast address',
  unspecified: 'unspecified address',
  broadcast: 'broadcast address',
};

type Allowance = { names: Set<string>; ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] };

function allowance(policy: FetchPolicy): Allowance {
  const names = new Set<string>();
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const raw of policy.allow) {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, '');
    if (!entry) continue;
    if (entry.includes('/') && ipaddr.isValidCIDR(entry)) ranges.push(ipaddr.parseCIDR(entry));
    else if (ipaddr.isValid(entry)) {
      const a = ipaddr.parse(entry);
      ranges.push([a, a.kind() === 'ipv4' ? 32 : 128]);
    } else names.add(entry);
  }
  return { names, ranges };
}

function inRanges(addr: ipaddr.IPv4 | ipaddr.IPv6, ranges: Allowance['ranges']): boolean {
  return ranges.some(([net, bits]) => addr.kind() === net.kind() && addr.match(net as never, bits));
}

/** Why `address` may not be connected to, or null when it may. */
export function refusedAddress(address: string, allowed: Allowance): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let addr = ipaddr.parse(address);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
    addr = (addr as ipaddr.IPv6).toIPv4Address();
  if (inRanges(addr, allowed.ranges)) return null;
  const range = addr.range();
  if (range === 'unicast') return null;
  return WORDS[range] ?? `reserved address (${range})`;
}

export type Outbound = ReturnType<typeof createOutbound>;

export function createOutbound(policy: FetchPolicy) {
  const allowed = allowance(policy);
  const denied = policy.denyHosts.map((h) => h.toLowerCase());

  const resolver = new Resolver({ timeout: DNS.timeoutMs, tries: DNS.tries });
  if (policy.dnsServers?.length) resolver.setServers(policy.dnsServers);

  /** A and AAAA asked at once; either may be missing. Fails only when neither gives an address. */
  function resolveName(
    hostname: string,
    family: number,
    callback: (err: Error | null, addresses: LookupAddress[]) => void,
  ): void {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost'))
      return process.nextTick(callback, null, [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]);
    if (allowed.names.has(name))
      return void dnsLookup(hostname, { all: true, family }, (err, addresses) =>
        callback(err, addresses),
      );
    const out: LookupAddress[] = [];
    let failure: Error | null = null;
    let waiting = 0;
    const ask = (fam: 4 | 6) => {
      waiting++;
      const answered = (err: Error | null, addresses: string[]) => {
        if (err) failure ??= err;
        else out.push(...addresses.map((address) => ({ address, family: fam })));
        if (--waiting > 0) return;
        out.sort((a, b) => a.family - b.family);
        callback(out.length ? null : (failure ?? new Error(`no address for ${hostname}`)), out);
      };
      if (fam === 4) resolver.resolve4(name, answered);
      else resolver.resolve6(name, answered);
    };
    if (family !== 6) ask(4);
    if (family !== 4) ask(6);
  }

  /** Resolves a name and refuses it unless every address it resolves to may be reached. */
  const lookup = (
    hostname: string,
    options: { all?: boolean; family?: number },
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    resolveName(hostname, options.family ?? 0, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      if (!allowed.names.has(hostname.toLowerCase())) {
        for (const a of list) {
          const why = refusedAddress(a.address, allowed);
          if (why)
            return callback(
              new FetchRefused(
                `fetch to ${hostname} refused: it resolves to ${a.address}, a ${why}`,
              ),
              [],
            );
        }
      }
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
  // undici (dozens of modules) is loaded by a thread's first outbound fetch, not by every thread's start
  let client: Promise<{ agent: Agent; fetch: typeof import('undici').fetch }> | undefined;
  const undici = () =>
    (client ??= import('undici').then((u) => ({
      fetch: u.fetch,
      agent: new u.Agent({
        connect: { lookup: lookup as never },
        maxHeaderSize: OUTBOUND.maxHeaderBytes,
        connections: 64,
      }),
    })));

  /** Refuses a URL before anything is sent: scheme, the platform's hosts, and IP literals. */
  function check(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new FetchRefused(
        `fetch to ${url.protocol} URLs is not supported (only http and https)`,
      );
    const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
    if (denied.some((d) => host === d || host.endsWith(`.${d}`)))
      throw new FetchRefused(`fetch to ${host} refused: that is this platform's own host`);
    if (allowed.names.has(host)) return;
    if (ipaddr.isValid(host)) {
      const why = refusedAddress(host, allowed);
      if (why) throw new FetchRefused(`fetch to ${host} refused: ${why}`);
    }
  }

  /** One fetch, redirects followed here (each hop checked), the body read up to its cap. */
  async function send(req: OutboundRequest, signal: AbortSignal): Promise<OutboundResponse> {
    let url = new URL(req.url);
    let method = req.method;
    let body = req.body;
    let headers = req.headers;
    for (let hop = 0; ; hop++) {
      check(url);
      let res;
      const { agent, fetch: undiciFetch } = await undici();
      try {
        res = await undiciFetch(url, {
          method,
          headers,
          body: body as UndiciBody,
          redirect: 'manual',
          signal,
          dispatcher: agent,
          ...(body instanceof ReadableStream ? { duplex: 'half' as const } : {}),
        });
      } catch (err) {
        if (signal.aborted) throw err;
        const cause = (err as { cause?: unknown }).cause;
        if (cause instanceof FetchRefused) throw cause;
        throw new FetchRefused(
          `fetch to ${url.host} failed: ${cause instanceof Error ? cause.message : (err as Error).message}`,
        );
      }
      const location = res.headers.get('location');
      if (req.redirect !== 'manual' && [301, 302, 303, 307, 308].includes(res.status) && location) {
        await res.body?.cancel().catch(() => {});
        if (req.redirect === 'error')
          throw new FetchRefused(`fetch to ${url.host} was redirected, and redirect is "error"`);
        if (hop >= OUTBOUND.maxRedirects)
          throw new FetchRefused(
            `fetch to ${req.url} was redirected more than ${OUTBOUND.maxRedirects} times`,
          );
        const next = new URL(location, url);
        // 303, and 301/302 after a POST, continue as a GET without a body (the fetch standard)
        const dropsBody =
          res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST');
        if (!dropsBody && body instanceof ReadableStream)
          throw new FetchRefused(
            `fetch to ${url.host} was redirected (${res.status}), and a streamed request body cannot be sent again`,
          );
        if (dropsBody) {
          if (method !== 'HEAD') method = 'GET';
          body = undefined;
          headers = headers.filter(
            ([n]) => !/^content-(type|length|encoding|language|location)$/i.test(n),
          );
        }
        // credentials do not follow a redirect to another origin
        if (next.origin !== url.origin)
          headers = headers.filter(
            ([n]) => !/^(authorization|cookie|proxy-authorization)$/i.test(n),
          );
        url = next;
        continue;
      }
      const out: [string, string][] = [];
      res.headers.forEach((value, name) => {
        if (name === 'set-cookie') return;
        out.push([name, value]);
      });
      for (const c of res.headers.getSetCookie()) out.push(['set-cookie', c]);
      return {
        status: res.status,
        statusText: res.statusText,
        headers: out,
        url: url.href,
        redirected: hop > 0,
        body: res.body ? (res.body.getReader() as ReadableStreamDefaultReader<Uint8Array>) : null,
      };
    }
  }

  return { send, close: async () => (client ? (await client).agent.close() : undefined) };
}

/** The next chunk of a response body (empty at its end). */
export async function readChunk(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<{ done: boolean; bytes: ArrayBuffer }> {
  const { done, value } = await reader.read();
  if (done) return { done: true, bytes: new ArrayBuffer(0) };
  return {
    done: false,
    bytes:
      value.byteOffset === 0 && value.byteLength === value.buffer.byteLength
        ? (value.buffer as ArrayBuffer)
        : value.slice().buffer,
  };
}

/** The rest of a response body, at most `OUTBOUND.maxResponseBytes` (then the read fails and the body is cancelled). */
export async function readRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  host: string,
): Promise<ArrayBuffer> {
  const tooLarge = () =>
    new FetchRefused(
      `the response from ${host} is larger than ${OUTBOUND.maxResponseBytes / 1024 / 1024} MiB (read its body as a stream instead)`,
    );
  return (await readLimited(reader, OUTBOUND.maxResponseBytes, tooLarge)).buffer as ArrayBuffer;
}

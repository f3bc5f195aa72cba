/**
 * Verifying a custom domain with real DNS look-ups (Node's resolver; `PLATFORM_DNS_SERVERS` points
 * it at chosen servers, as tests and air-gapped sites do). Every check says what was expected,
 * what DNS answered and what to fix, the way `vercel domains verify` does:
 * - TXT `_platform-challenge.<hostname>` holds the route's value: ownership (decides);
 * - CAA on the name or its nearest parent with CAA records allows one of our issuers (decides:
 *   no certificate could be issued otherwise);
 * - traffic: a subdomain's CNAME to the target, an apex's addresses matching the target's
 *   (flattening, ALIAS/ANAME): advice, reported but not required, since traffic often moves last.
 */
import { Resolver } from 'node:dns/promises';
import type { Config } from '../config.ts';
import type { DnsCheck } from './schemas.ts';

export const CHALLENGE_PREFIX = '_platform-challenge';
export const TAKEOVER_PREFIX = '_platform-takeover';
const LOOKUP_TIMEOUT_MS = 3000;

export type Diagnosis = { verified: boolean; checks: DnsCheck[] };

function resolverFor(config: Config): Resolver {
  const r = new Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 2 });
  if (config.domains.dnsServers.length) r.setServers([...config.domains.dnsServers]);
  return r;
}

const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND', 'ENONAME', 'NXDOMAIN']);
type Lookup<T> = { records: T[]; failure: string | null };

/** A look-up that never throws: no records is an empty answer; a failure (timeout, SERVFAIL) is named. */
async function look<T>(fn: () => Promise<T[]>): Promise<Lookup<T>> {
  try {
    return { records: await fn(), failure: null };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EFAIL';
    return NO_RECORDS.has(code) ? { records: [], failure: null } : { records: [], failure: code };
  }
}

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');
const failed = (l: Lookup<unknown>) =>
  l.failure ? ` (the look-up failed: ${l.failure}; check that the zone's name servers answer)` : '';

async function txtCheck(r: Resolver, hostname: string, value: string): Promise<DnsCheck> {
  const name = `${CHALLENGE_PREFIX}.${hostname}`;
  const l = await look(() => r.resolveTxt(name));
  const found = l.records.map((chunks) => chunks.join(''));
  const ok = found.includes(value);
  const message = ok
    ? `TXT ${name} holds the verification value.`
    : found.length
      ? `TXT ${name} holds ${found.map((f) => JSON.stringify(f)).join(', ')}, not the verification value: set it to "${value}".`
      : `No TXT record at ${name}${failed(l)}: create TXT ${name} with the value "${value}".`;
  return { check: 'txt', name, ok, blocking: true, expected: value, found, message };
}

/** Whether TXT `name` holds `value` (a failed look-up is a no). */
export async function txtHolds(config: Config, name: string, value: string): Promise<boolean> {
  const l = await look(() => resolverFor(config).resolveTxt(name));
  return l.records.some((chunks) => chunks.join('') === value);
}

async function addresses(r: Resolver, name: string): Promise<Lookup<string>> {
  const [a, aaaa] = await Promise.all([look(() => r.resolve4(name)), look(() => r.resolve6(name))]);
  return { records: [...a.records, ...aaaa.records], failure: a.failure ?? aaaa.failure };
}

async function trafficCheck(
  r: Resolver,
  config: Config,
  hostname: string,
  apex: boolean,
): Promise<DnsCheck> {
  const target = config.domains.cnameTarget;
  const targetAddrs = await addresses(r, target);
  const expectedAddrs = new Set([...targetAddrs.records, ...config.domains.apexAddresses]);
  if (!apex) {
    const cname = await look(() => r.resolveCname(hostname));
    const found = cname.records.map(bare);
    if (found.includes(target))
      return {
        check: 'cname',
        name: hostname,
        ok: true,
        blocking: false,
        expected: target,
        found,
        message: `CNAME ${hostname} points to ${target}.`,
      };
    const own = await addresses(r, hostname);
    const flattened = own.records.length > 0 && own.records.every((a) => expectedAddrs.has(a));
    if (flattened)
      return {
        check: 'cname',
        name: hostname,
        ok: true,
        blocking: false,
        expected: target,
        found: own.records,
        message: `${hostname} resolves to the same addresses as ${target} (a flattened or proxied CNAME).`,
      };
    const message = found.length
      ? `CNAME ${hostname} points to ${found.join(', ')}: change it to ${target}.`
      : own.records.length
        ? `${hostname} has address records (${own.records.join(', ')}) instead of a CNAME: replace them with CNAME ${hostname} → ${target}.`
        : `No CNAME at ${hostname}${failed(cname)}: create CNAME ${hostname} → ${target} so visitors reach the app.`;
    return {
      check: 'cname',
      name: hostname,
      ok: false,
      blocking: false,
      expected: target,
      found: found.length ? found : own.records,
      message,
    };
  }
  const own = await addresses(r, hostname);
  const expected = [...expectedAddrs].join(', ') || target;
  const ok = own.records.length > 0 && own.records.every((a) => expectedAddrs.has(a));
  const message = ok
    ? `${hostname} resolves to ${own.records.join(', ')}, the platform's addresses.`
    : own.records.length
      ? `${hostname} resolves to ${own.records.join(', ')}: point the apex at ${target} with CNAME flattening or an ALIAS/ANAME record${config.domains.apexAddresses.length ? `, or A/AAAA records ${config.domains.apexAddresses.join(', ')}` : ''}.`
      : `${hostname} has no address records${failed(own)}: point the apex at ${target} with CNAME flattening or an ALIAS/ANAME record${config.domains.apexAddresses.length ? `, or A/AAAA records ${config.domains.apexAddresses.join(', ')}` : ''}.`;
  return {
    check: 'apex',
    name: hostname,
    ok,
    blocking: false,
    expected,
    found: own.records,
    message,
  };
}

/** RFC 8659: the CAA set of the closest name (the host, then each parent) that has one decides. */
async function caaCheck(r: Resolver, config: Config, hostname: string): Promise<DnsCheck> {
  const issuers = config.domains.caaIssuers;
  const labels = hostname.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    const name = labels.slice(i).join('.');
    const l = await look(() => r.resolveCaa(name));
    const issue = l.records
      .filter((c) => c.issue !== undefined)
      .map((c) => bare(String(c.issue).split(';')[0]!.trim()));
    if (!l.records.length) continue;
    if (!issue.length) continue; // iodef or issuewild only: issuance of non-wildcard names is not restricted
    const ok = issue.some((ca) => issuers.includes(ca));
    const message = ok
      ? `CAA at ${name} allows ${issue.filter((ca) => issuers.includes(ca)).join(', ')}.`
      : `CAA at ${name} allows only ${issue.map((ca) => ca || '(no CA)').join(', ')}, so no certificate can be issued: add CAA ${name} 0 issue "${issuers[0]}".`;
    return {
      check: 'caa',
      name,
      ok,
      blocking: true,
      expected: issuers.join(', '),
      found: issue,
      message,
    };
  }
  return {
    check: 'caa',
    name: hostname,
    ok: true,
    blocking: true,
    expected: issuers.join(', '),
    found: [],
    message: 'No CAA records restrict certificate issuance.',
  };
}

/** Runs every check for a domain; verified when every deciding check passes. */
export async function diagnose(
  config: Config,
  input: { hostname: string; apex: boolean; value: string },
): Promise<Diagnosis> {
  const r = resolverFor(config);
  const checks = await Promise.all([
    txtCheck(r, input.hostname, input.value),
    trafficCheck(r, config, input.hostname, input.apex),
    caaCheck(r, config, input.hostname),
  ]);
  return { verified: checks.every((c) => !c.blocking || c.ok), checks };
}

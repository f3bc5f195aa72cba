/**
 * What a slug and a custom hostname may be: the rules, the normalisation, and which hostnames
 * are a zone's apex (they cannot hold a CNAME). docs/decisions/domains.md "Routes and domains".
 */
import { parsePreviewLabel } from '../releases/previews.ts';
import { parse } from 'tldts';
import { APP_ID } from '../lib/ids.ts';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';

/** Labels no slug may take: the platform's own names and ones people would mistake for it. */
export const RESERVED_SLUGS = new Set([
  'www',
  'api',
  'app',
  'apps',
  'console',
  'dashboard',
  'docs',
  'admin',
  'administrator',
  'root',
  'mail',
  'smtp',
  'imap',
  'pop',
  'ftp',
  'ns',
  'ns1',
  'ns2',
  'dns',
  'cdn',
  'static',
  'assets',
  'status',
  'help',
  'support',
  'billing',
  'account',
  'accounts',
  'login',
  'logout',
  'signin',
  'signup',
  'auth',
  'oauth',
  'sso',
  'security',
  'platform',
  'internal',
  'system',
  'localhost',
  'test',
  'staging',
  'dev',
  'cname',
  'webhook',
  'webhooks',
  'blog',
  'about',
  'legal',
  'abuse',
  'postmaster',
  'hostmaster',
]);

const SLUG = /^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$/;

/** A slug as typed (case folded), or 400 saying which rule it breaks. */
export function checkSlug(raw: string): string {
  const slug = raw.trim().toLowerCase();
  const bad = (why: string) =>
    new ApiError('invalid_request', `"${raw}" cannot be a slug: ${why}.`, { field: 'slug' });
  if (slug.length < 3 || slug.length > 63) throw bad('it must be 3 to 63 characters');
  if (!SLUG.test(slug))
    throw bad('use lowercase letters, digits and hyphens, not starting or ending with a hyphen');
  if (slug.slice(2, 4) === '--')
    throw bad('hyphens in the third and fourth places are reserved for IDNA ("xn--")');
  if (APP_ID.test(slug))
    throw bad('12 to 24 letters and digits with no hyphen is the shape of an app id; add a hyphen');
  if (parsePreviewLabel(slug))
    throw bad('an app id, two hyphens and 20 letters and digits is the shape of a preview address');
  if (RESERVED_SLUGS.has(slug)) throw bad('it is reserved');
  return slug;
}

export type Hostname = { hostname: string; apex: boolean; zone: string };

/**
 * A custom hostname normalised (lowercase, trailing dot dropped, IDNA to its `xn--` form) and
 * checked: a DNS name of at least two labels under a known or private suffix, not an IP address,
 * not a public suffix itself, and not one of this platform's hosts, under one, or above one.
 */
export function checkHostname(config: Config, raw: string): Hostname {
  const bad = (why: string) =>
    new ApiError('invalid_request', `"${raw}" cannot be a custom domain: ${why}.`, {
      field: 'hostname',
    });
  const input = raw.trim();
  if (!input || input.length > 253) throw bad('it must be a host name of at most 253 characters');
  if (/[/:@?#\s\\]/.test(input))
    throw bad('give the host name only, without a scheme, port or path');
  let hostname: string;
  try {
    hostname = new URL(`http://${input}/`).hostname.replace(/\.$/, '');
  } catch {
    throw bad('it is not a valid host name');
  }
  if (hostname.startsWith('[') || /^\d+(\.\d+){3}$/.test(hostname))
    throw bad('an IP address cannot be verified; use a host name');
  const labels = hostname.split('.');
  if (labels.length < 2) throw bad('it needs at least two labels, like shop.example.com');
  for (const label of labels) {
    if (!/^[a-z0-9_](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(label))
      throw bad(`the label "${label}" is not a DNS label`);
  }
  if (labels[0] === '*') throw bad('wildcards are not supported');
  // at or under any of the platform's hosts (a page on evil.console.<host> would share cookies'
  // parent domain and look like the console), or a parent of one of them
  const own = Object.values(config.hosts);
  if (
    own.includes(hostname) ||
    own.some((h) => hostname.endsWith(`.${h}`)) ||
    own.some((h) => h.endsWith(`.${hostname}`))
  ) {
    throw bad("it is one of this platform's own hosts");
  }
  const parsed = parse(hostname);
  if (parsed.isIp) throw bad('an IP address cannot be verified; use a host name');
  if (!parsed.domain) throw bad('it is a public suffix, which no one can own');
  return { hostname, apex: parsed.domain === hostname, zone: parsed.domain };
}

/** The apex of its zone (`example.com`, `example.co.uk`): a CNAME is not allowed there. */
export function isApex(hostname: string): boolean {
  return parse(hostname).domain === hostname;
}

/** A hostname in a URL path (`/domains/<hostname>`), normalised the same way; 404 when it cannot be one. */
export function hostnameParam(raw: string): string {
  try {
    return new URL(`http://${decodeURIComponent(raw).trim()}/`).hostname.replace(/\.$/, '');
  } catch {
    return raw.toLowerCase();
  }
}

/** Route rows as the contract's Route record, with the DNS records a customer has to create. */
import { publicUrl, type Config } from '../config.ts';
import { CHALLENGE_PREFIX } from './dns-check.ts';
import type { DnsCheck, DnsRecord, ProviderRecord, RouteRecord, RouteStatus } from './schemas.ts';
import type { RouteRow } from './queries.ts';
import { isApex } from './names.ts';

const APEX_NOTE =
  "This is the apex of its zone, where a plain CNAME is not allowed (it would break the zone's other records, such as mail). Use CNAME flattening where your DNS provider supports it (Cloudflare does); otherwise an ALIAS or ANAME record (Route 53, DNSimple, NS1 and others)";

/** The records to create for a custom domain: traffic, ownership, and for an apex the www companion. */
export function dnsInstructions(
  config: Config,
  hostname: string,
  challenge: string,
  provider: ProviderRecord | null,
): { records: DnsRecord[]; traffic_note: string | null } {
  const target = config.domains.cnameTarget;
  const apex = isApex(hostname);
  const records: DnsRecord[] = [];
  let note: string | null = null;
  if (apex) {
    const addrs = config.domains.apexAddresses;
    note = `${APEX_NOTE}${addrs.length ? `, or A/AAAA records with the platform's addresses (${addrs.join(', ')})` : ''}. Add www.${hostname} as well and send it to ${target} with a CNAME.`;
    records.push({
      type: 'ALIAS',
      name: hostname,
      value: target,
      purpose: 'traffic',
      required: !addrs.length,
      note: 'CNAME flattening, ALIAS or ANAME: whichever your DNS provider offers at the apex.',
    });
    for (const a of addrs)
      records.push({
        type: a.includes(':') ? 'AAAA' : 'A',
        name: hostname,
        value: a,
        purpose: 'traffic',
        required: false,
        note: 'Instead of the ALIAS record, where your DNS provider has none.',
      });
    records.push({
      type: 'CNAME',
      name: `www.${hostname}`,
      value: target,
      purpose: 'www',
      required: false,
      note: `Add www.${hostname} as a domain of this app too, so both names serve it.`,
    });
  } else {
    records.push({
      type: 'CNAME',
      name: hostname,
      value: target,
      purpose: 'traffic',
      required: true,
      note: null,
    });
  }
  if (provider) {
    for (const v of provider.validation_records)
      records.push({
        type: 'TXT',
        name: v.name,
        value: v.value,
        purpose: v.name.startsWith('_cf-custom-hostname') ? 'verification' : 'certificate',
        required: true,
        note: null,
      });
  } else {
    records.push({
      type: 'TXT',
      name: `${CHALLENGE_PREFIX}.${hostname}`,
      value: challenge,
      purpose: 'verification',
      required: true,
      note: 'Keep it while the domain is in use.',
    });
  }
  return { records, traffic_note: note };
}

export function routeUrl(config: Config, hostname: string): string {
  return `${publicUrl(config, hostname)}/`;
}

export function toRouteRecord(config: Config, row: RouteRow): RouteRecord {
  const provider = (row.provider ?? null) as ProviderRecord | null;
  const custom = row.route_type === 'custom_domain';
  const challenge = row.verification_token ?? '';
  const ownership = provider?.validation_records.find((v) =>
    v.name.startsWith('_cf-custom-hostname'),
  );
  return {
    route_id: row.id,
    app_id: row.app_id,
    route_type: row.route_type,
    hostname: row.hostname,
    slug: row.slug,
    url: routeUrl(config, row.hostname),
    status: row.status as RouteStatus,
    disabled_reason: row.disabled_reason,
    verification: custom
      ? {
          method: 'dns_txt',
          name: ownership?.name ?? `${CHALLENGE_PREFIX}.${row.hostname}`,
          value: ownership?.value ?? challenge,
          verified_at: row.verified_at?.toISOString() ?? null,
          last_checked_at: row.last_checked_at?.toISOString() ?? null,
          next_check_at: row.next_check_at?.toISOString() ?? null,
          checks: ((row.last_check as { checks?: DnsCheck[] } | null)?.checks ?? []) as DnsCheck[],
        }
      : null,
    dns_instructions: custom ? dnsInstructions(config, row.hostname, challenge, provider) : null,
    provider,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The Route record (slug or custom domain) and the bodies of the slug, domain and route endpoints. */
import * as v from 'valibot';
import { component, DateTime, Url } from '../openapi/components.ts';

export const ROUTE_STATUSES = [
  'pending_dns',
  'active',
  'disabled',
  'disabled_downgrade',
  'disabled_billing',
  'deleted',
] as const;
export type RouteStatus = (typeof ROUTE_STATUSES)[number];

/** A record the customer creates at their DNS provider. */
export const DnsRecord = component(
  'DnsRecord',
  v.strictObject({
    type: v.picklist(['CNAME', 'ALIAS', 'A', 'AAAA', 'TXT']),
    name: v.string(),
    value: v.string(),
    /** traffic: sends visitors here; verification: proves ownership; www: the apex's www companion; certificate: lets the provider issue one */
    purpose: v.picklist(['traffic', 'verification', 'www', 'certificate']),
    /** false for an alternative or optional record (an apex's A records when ALIAS is used, the www record) */
    required: v.boolean(),
    note: v.nullable(v.string()),
  }),
);
export type DnsRecord = v.InferOutput<typeof DnsRecord>;

export const DnsInstructions = component(
  'DnsInstructions',
  v.strictObject({ records: v.array(DnsRecord), traffic_note: v.nullable(v.string()) }),
);

/** One look-up of a verification: what was expected, what DNS answered, and what to fix. */
export const DnsCheck = component(
  'DnsCheck',
  v.strictObject({
    check: v.picklist(['txt', 'cname', 'apex', 'caa', 'provider']),
    name: v.string(),
    ok: v.boolean(),
    /** whether this check decides verification (TXT and CAA do; traffic is advice until visitors arrive) */
    blocking: v.boolean(),
    expected: v.string(),
    found: v.array(v.string()),
    message: v.string(),
  }),
);
export type DnsCheck = v.InferOutput<typeof DnsCheck>;

export const RouteVerification = component(
  'RouteVerification',
  v.strictObject({
    method: v.literal('dns_txt'),
    name: v.string(),
    value: v.string(),
    verified_at: v.nullable(DateTime),
    last_checked_at: v.nullable(DateTime),
    next_check_at: v.nullable(DateTime),
    checks: v.array(DnsCheck),
  }),
);

export const ProviderRecord = component(
  'RouteProvider',
  v.strictObject({
    name: v.literal('cloudflare'),
    id: v.string(),
    status: v.string(),
    ssl_status: v.nullable(v.string()),
    validation_records: v.array(
      v.strictObject({ type: v.string(), name: v.string(), value: v.string() }),
    ),
    verification_errors: v.array(v.string()),
  }),
);
export type ProviderRecord = v.InferOutput<typeof ProviderRecord>;

export const RouteRecord = component(
  'Route',
  v.strictObject({
    route_id: v.string(),
    app_id: v.string(),
    route_type: v.picklist(['slug', 'custom_domain']),
    hostname: v.string(),
    slug: v.nullable(v.string()),
    url: Url,
    status: v.picklist(ROUTE_STATUSES),
    disabled_reason: v.nullable(v.string()),
    verification: v.nullable(RouteVerification),
    dns_instructions: v.nullable(DnsInstructions),
    provider: v.nullable(ProviderRecord),
    created_at: DateTime,
    updated_at: DateTime,
  }),
);
export type RouteRecord = v.InferOutput<typeof RouteRecord>;

export const RouteList = component(
  'RouteList',
  v.strictObject({ app_id: v.string(), routes: v.array(RouteRecord) }),
);
export const SlugList = component(
  'SlugList',
  v.strictObject({ app_id: v.string(), slugs: v.array(RouteRecord) }),
);
export const DomainList = component(
  'DomainList',
  v.strictObject({ app_id: v.string(), domains: v.array(RouteRecord) }),
);

export const CreateSlugBody = component(
  'CreateSlugRequest',
  v.strictObject({ slug: v.pipe(v.string(), v.maxLength(253)) }),
);
export const CreateDomainBody = component(
  'CreateDomainRequest',
  v.strictObject({ hostname: v.pipe(v.string(), v.maxLength(300)) }),
);
/** `dns_verified: true` is honoured for platform operators only (`npm run admin -- verify-domain`); anyone else gets 403. */
export const VerifyDomainBody = component(
  'VerifyDomainRequest',
  v.strictObject({ dns_verified: v.optional(v.boolean()) }),
);
/** What an owner may set: `active` (enable; an unverified domain returns to `pending_dns`) or `disabled`. */
export const PatchRouteBody = component(
  'UpdateRouteRequest',
  v.strictObject({ status: v.picklist(['active', 'disabled']) }),
);

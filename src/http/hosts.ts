import type { Config } from '../config.ts';
import { APP_ID } from '../lib/ids.ts';
import { parsePreviewLabel } from '../releases/previews.ts';

export type HostKind =
  | { kind: 'api' | 'console' | 'docs' }
  | { kind: 'app'; label: string }
  | { kind: 'preview'; appId: string; releaseId: string }
  | { kind: 'custom'; hostname: string }
  | { kind: 'unknown' };

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Which plane a request is for, from its host name (ports ignored, case-insensitive). Under the apps
 * host, a label shaped like an app id is a canonical origin; any other label can only be a slug,
 * which is an alias like a custom domain (`custom`: resolved through the route table), or
 * `<app_id>--<release token>`, a release's preview origin (slugs cannot take that shape).
 */
export function classifyHost(config: Config, hostname: string): HostKind {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  const { hosts } = config;
  if (host === hosts.api || LOOPBACK.has(host)) return { kind: 'api' };
  if (host === hosts.console) return { kind: 'console' };
  if (host === hosts.docs) return { kind: 'docs' };
  if (host.endsWith(`.${hosts.apps}`)) {
    const label = host.slice(0, -hosts.apps.length - 1);
    if (label.includes('.')) return { kind: 'unknown' };
    if (APP_ID.test(label)) return { kind: 'app', label };
    const preview = parsePreviewLabel(label);
    return preview ? { kind: 'preview', ...preview } : { kind: 'custom', hostname: host };
  }
  return { kind: 'custom', hostname: host };
}

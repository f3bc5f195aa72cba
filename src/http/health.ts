import { ping } from '../db/database.ts';
import * as v from 'valibot';
import type { Deps } from '../deps.ts';
import { publicUrl } from '../config.ts';
import { component, Url } from '../openapi/components.ts';

export const HealthResponse = component(
  'HealthResponse',
  v.strictObject({
    status: v.literal('ok'),
    service: v.literal('platform-api'),
    db: v.optional(v.picklist(['ok', 'unavailable'])),
    public_base_url: v.optional(Url),
    api_base_url: v.optional(Url),
  }),
);

/** The contract's HealthResponse; `db` is `unavailable` (not an error) when Postgres does not answer within a second. */
export async function health(deps: Deps): Promise<v.InferOutput<typeof HealthResponse>> {
  let db: 'ok' | 'unavailable' = 'unavailable';
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      ping(deps.db),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), 1000))),
    ]);
    db = 'ok';
  } catch {
    db = 'unavailable';
  } finally {
    clearTimeout(timer);
  }
  return {
    status: 'ok',
    service: 'platform-api',
    db,
    public_base_url: publicUrl(deps.config, deps.config.hosts.console),
    api_base_url: publicUrl(deps.config, deps.config.hosts.api),
  };
}

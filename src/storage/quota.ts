/**
 * The `storage.bytes.max` quota: a write that would take an account's app data and files past its
 * plan's limit is refused with 402 `quota_exceeded`. Measuring an account reads all its rows, so a
 * node keeps each writing account's measure for FRESH_MS, adds what it writes meanwhile, and
 * measures again behind the next write once the measure is older (the write is judged by the older
 * measure plus what was added). Other nodes' writes in that window are seen at the next measure:
 * an account can pass its limit by at most what all nodes write in FRESH_MS (docs/decisions/plans-and-billing.md,
 * "Storage quota"). Deleting is never refused, and what shrinks is never refused.
 */
import type { Executor } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { formatBytes } from '../lib/bytes.ts';
import { howToGet, planOf, upgradeFor } from '../plans/catalogue.ts';
import { measureStorage, STORAGE_METRIC, type Measured } from './measure.ts';

export const FRESH_MS = 30_000;
/** Accounts whose measure a node keeps; past it the oldest are forgotten (and measured again if they write). */
const MAX_ACCOUNTS = 10_000;

type Entry = Measured & { at: number; refreshing?: Promise<void> };
export type StorageQuota = {
  /**
   * Throws `quota_exceeded` when `increment` more bytes would pass the account's limit. A caller
   * inside a transaction passes it as `db`, so a first measure never waits for a second connection.
   */
  check(accountId: string, increment: number, db?: Executor): Promise<void>;
  /** Counts bytes just written, or freed when negative (until the next measure). */
  added(accountId: string, increment: number): void;
  /** A measure taken elsewhere (the account's status) replaces this node's. */
  remember(accountId: string, measured: Measured): void;
};

const quotas = new WeakMap<Deps['db'], StorageQuota>();

/** The quota of a service (one per database handle, so one per running service). */
export function storageQuota(deps: Pick<Deps, 'db' | 'config'>): StorageQuota {
  let q = quotas.get(deps.db);
  if (!q) quotas.set(deps.db, (q = createStorageQuota(deps)));
  return q;
}

function createStorageQuota(deps: Pick<Deps, 'db' | 'config'>): StorageQuota {
  const entries = new Map<string, Entry>();
  const remember = (accountId: string, measured: Measured) => {
    entries.delete(accountId);
    if (entries.size >= MAX_ACCOUNTS) entries.delete(entries.keys().next().value!);
    entries.set(accountId, { ...measured, at: Date.now() });
  };
  const measure = async (accountId: string, db: Executor = deps.db) =>
    remember(accountId, await measureStorage(db, accountId));
  async function current(accountId: string, db: Executor): Promise<Entry> {
    const e = entries.get(accountId);
    if (!e) {
      await measure(accountId, db);
      return entries.get(accountId)!;
    }
    if (Date.now() - e.at >= FRESH_MS && !e.refreshing) {
      e.refreshing = measure(accountId).catch(() => {
        e.refreshing = undefined; // measured again at the next write
      });
    }
    return e;
  }
  return {
    async check(accountId, increment, db = deps.db) {
      if (increment <= 0) return;
      const e = await current(accountId, db);
      const plans = deps.config.plans;
      const plan = planOf(plans, e.planKey ?? 'free');
      const limit = plan.limits['storage.bytes.max'];
      if (e.bytes + increment <= limit) return;
      const next = upgradeFor(plans, plan, 'storage.bytes.max');
      const upgrade = next
        ? ` or ${howToGet(plans, next, ` (${formatBytes(plans[next].limits['storage.bytes.max'])})`)}`
        : '';
      throw new ApiError(
        'quota_exceeded',
        `Your ${plan.display_name} plan stores ${formatBytes(limit)} of app data and files; this account has ${formatBytes(e.bytes)}, and this would add ${formatBytes(increment)}. Delete rows or files it no longer needs${upgrade}.`,
        {
          metric: STORAGE_METRIC,
          plan_key: plan.key,
          limit,
          current: e.bytes,
          increment,
          upgrade_required: next !== null,
        },
      );
    },
    added(accountId, increment) {
      const e = entries.get(accountId);
      if (e) e.bytes = Math.max(0, e.bytes + increment);
    },
    remember,
  };
}

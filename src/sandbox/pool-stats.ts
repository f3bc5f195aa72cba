/**
 * What a sandbox pool has done since it started, for `/metrics`: plain numbers the pool bumps on
 * its own paths (no label lookups there), read when Prometheus scrapes.
 */
import {
  FETCHES_FAILED,
  FETCHES_OK,
  INSTANCE_BYTES,
  INSTANCES,
  WASM_BYTES,
} from './shared-state.ts';

export type PoolCounters = {
  calls: number;
  cpuMs: number;
  /** calls that waited for their release's turn, and how long in all */
  queued: number;
  queueWaitMs: number;
  /** calls refused because their release's queue was full or the wait ran out */
  overloaded: number;
  /** workers replaced, by why (a bounded set of reasons) */
  retired: Record<RetireReason, number>;
  /** outbound fetches of workers that are gone (live workers count in their shared state) */
  fetchesOk: number;
  fetchesFailed: number;
};

export type RetireReason = 'poisoned' | 'watchdog' | 'exited' | 'error' | 'other';

export function newCounters(): PoolCounters {
  return {
    calls: 0,
    cpuMs: 0,
    queued: 0,
    queueWaitMs: 0,
    overloaded: 0,
    retired: { poisoned: 0, watchdog: 0, exited: 0, error: 0, other: 0 },
    fetchesOk: 0,
    fetchesFailed: 0,
  };
}

export function retireReason(reason: string): RetireReason {
  if (reason.startsWith('poisoned')) return 'poisoned';
  if (reason.startsWith('watchdog')) return 'watchdog';
  if (reason.startsWith('worker exited')) return 'exited';
  if (reason.startsWith('worker error')) return 'error';
  return 'other';
}

/** A retiring worker's fetch counts move into the pool's totals, so they are never lost or counted twice. */
export function keepFetchCounts(counters: PoolCounters, state: Float64Array): void {
  counters.fetchesOk += state[FETCHES_OK]!;
  counters.fetchesFailed += state[FETCHES_FAILED]!;
}

export type PoolStats = PoolCounters & {
  workers: number;
  /** releases whose code some worker holds (warm instances, as the pool knows them) */
  warmReleases: number;
  inFlight: number;
  waiting: number;
  /** warm instances in the live workers, the memory they were last measured to hold, and the workers' WebAssembly memory */
  instances: number;
  instanceBytes: number;
  wasmBytes: number;
};

type LiveSlot = { state: Float64Array; loaded: { size: number }; pending: { size: number } };

/** The counters with what the live workers hold now. */
export function poolStats(c: PoolCounters, slots: LiveSlot[], waiting: number): PoolStats {
  const sum = (read: (s: LiveSlot) => number) => slots.reduce((n, s) => n + read(s), 0);
  return {
    ...c,
    retired: { ...c.retired },
    fetchesOk: c.fetchesOk + sum((s) => s.state[FETCHES_OK]!),
    fetchesFailed: c.fetchesFailed + sum((s) => s.state[FETCHES_FAILED]!),
    workers: slots.length,
    warmReleases: sum((s) => s.loaded.size),
    inFlight: sum((s) => s.pending.size),
    waiting,
    instances: sum((s) => s.state[INSTANCES]!),
    instanceBytes: sum((s) => s.state[INSTANCE_BYTES]!),
    wasmBytes: sum((s) => s.state[WASM_BYTES]!),
  };
}

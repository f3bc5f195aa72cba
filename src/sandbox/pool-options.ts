/** The sandbox pool's options and the sizes and times derived from them. */
import { loadBudgetMs } from './limits.ts';
import type { EngineName } from './engine-variant.ts';
import type { FetchPolicy, Limits } from './protocol.ts';

export type SandboxOptions = {
  workers: number;
  limits: Limits;
  /** Longest a guest may run without yielding before its worker is terminated (a call's own CPU limit may make it shorter: `killAfterMs`). */
  hardKillMs: number;
  /** Warm instances one worker keeps at most (a backstop; memory decides first). Default 10,000. */
  maxInstancesPerWorker?: number;
  /** Memory the warm instances of one worker may hold, measured per instance. Default: the worker's WASM cap less room for three calls at their limit, at least a quarter of it. */
  instanceBudgetBytes?: number;
  /**
   * Cap on each worker's WASM memory, shared by all its instances: the host's safety net, since
   * QuickJS's own limit does not see large strings and buffers. Default: 8 instance limits, at least 256 MiB.
   */
  workerMemoryBytes?: number;
  onWorkerExit?: (info: { index: number; reason: string }) => void;
  /** Where app code's fetch may go (default: nowhere but public addresses). */
  fetchPolicy?: FetchPolicy;
  /** Which QuickJS build the threads load; default from the environment (engine.ts). */
  engine?: EngineName;
};

/** The WASM memory cap of one worker, in bytes: a whole number of 64 KiB pages, at most the 2 GiB the build allows. */
export function workerMemoryBytes(
  options: Pick<SandboxOptions, 'workerMemoryBytes' | 'limits'>,
): number {
  const wanted =
    options.workerMemoryBytes ?? Math.max(256 * 1024 * 1024, 8 * options.limits.memoryBytes);
  const page = 64 * 1024;
  return Math.min(2048 * 1024 * 1024, Math.max(32 * 1024 * 1024, Math.ceil(wanted / page) * page));
}

/** The memory one worker's warm instances may hold: what the WASM cap leaves after room for three calls at their limit. */
export function instanceBudgetBytes(
  options: Pick<SandboxOptions, 'instanceBudgetBytes' | 'workerMemoryBytes' | 'limits'>,
): number {
  if (options.instanceBudgetBytes !== undefined) return options.instanceBudgetBytes;
  const cap = workerMemoryBytes(options);
  return Math.max(cap / 4, cap - 3 * options.limits.memoryBytes);
}

/**
 * How long one stretch of a call's guest code may run before the watchdog ends its worker: three
 * times the most its instance may legitimately run at once (a module's load, `loadBudgetMs`), at
 * least a second, at most `hardKillMs`. The interrupt stops guest code at its CPU limit; the
 * watchdog is for code the interrupt cannot reach (a regular expression, a native operation), so a
 * Free call is not left running for the largest plan's time.
 */
export function killAfterMs(cpuMs: number, hardKillMs: number): number {
  return Math.min(hardKillMs, Math.max(1000, 3 * loadBudgetMs(cpuMs)));
}

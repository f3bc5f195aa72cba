/**
 * A sandbox worker thread: one QuickJS WASM module, one QuickJS runtime (own heap, memory and
 * stack caps) per release, kept warm in an LRU. The main thread sends invocations and may
 * terminate this thread at any time (watchdog). An out-of-memory, a stack overflow or an abort
 * poisons the WASM module, so after answering we exit and the pool starts a fresh worker.
 *
 * The parts: `calls.ts` (invocations, timers, host answers), `instances.ts` (runtimes, module
 * loading, the spare), `host-functions.ts` (what `__host` offers the prelude, typed by
 * `host-api.ts`), `limits.ts` (CPU segments, memory cap, failure kinds). This file is the message
 * loop and the boot.
 */
import { DEFAULT_INSTANCE_LIMITS } from './protocol.ts';
import { THREAD_ID } from './shared-state.ts';
import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten';
import { type EngineChoice, engineVariant } from './engine-variant.ts';
import { createCalls } from './calls.ts';
import { cpuClock, threadId } from './cpu-clock.ts';
import { guestCode } from './guest/build.ts';
import { createOutbound, type FetchPolicy } from './outbound.ts';
import { Outbox } from './outbox.ts';
import { createSubtleRunner } from './subtle.ts';
import type { WorkerInbound, WorkerOutbound } from './protocol.ts';
import type { WorkerState } from './worker-state.ts';
import { decodeInvocation } from './wire.ts';

const port = parentPort!;

/**
 * This worker's WASM memory, shared by all its instances and capped: when a guest's allocations
 * reach the cap, QuickJS fails them with "out of memory" instead of growing the host process.
 */
const wasmMemory = new WebAssembly.Memory({
  initial: 256,
  maximum: (workerData.memoryBytes as number) / 65536,
});

const state: WorkerState = {
  quickjs: await newQuickJSWASMModuleFromVariant(engineVariant(workerData.engine, wasmMemory)),
  engine: (workerData.engine as EngineChoice).name,
  wasmMemory,
  shared: new Float64Array(workerData.state as SharedArrayBuffer),
  maxInstances: workerData.maxInstances as number,
  instanceBudgetBytes: workerData.instanceBudgetBytes as number,
  ...(await guestCode()),
  /**
   * Outgoing messages cross in one batch per event-loop turn. The batch is sent early, before guest
   * code of another release runs, so a guest that gets this worker terminated can only take its own
   * release's finished answers with it, never another app's.
   */
  outbox: new Outbox<WorkerOutbound>(
    (msg, transfer) => port.postMessage(msg, transfer),
    (msgs) => ({ t: 'batch', msgs }),
  ),
  outbound: createOutbound(
    (workerData.fetchPolicy as FetchPolicy | undefined) ?? { allow: [], denyHosts: [] },
  ),
  subtle: createSubtleRunner(() => state.busyMs),
  hostCalls: new Map(),
  nextHostCallId: 1,
  poisoned: false,
  lastActivity: 0,
  busyMs: 0,
  spareLimits: workerData.limits
    ? { memoryBytes: workerData.limits.memoryBytes, stackBytes: workerData.limits.stackBytes }
    : { ...DEFAULT_INSTANCE_LIMITS },
};
const calls = createCalls(state);
// the pool's watchdog reads this thread's CPU time by its id (cpu-clock.ts); this thread's own clock
// is chosen now (it spins up to a scheduler tick to check the clock moves), not inside a first call
state.shared[THREAD_ID] = threadId();
cpuClock();

function onMessage(msg: WorkerInbound): void {
  state.lastActivity = performance.now();
  if (Array.isArray(msg)) void calls.invoke(decodeInvocation(msg));
  else if (msg.t === 'batch') for (const m of msg.msgs) onMessage(m);
  else if (msg.t === 'host-result') calls.hostResult(msg);
  else if (msg.t === 'evict') calls.evict(msg.releaseId);
  else if (msg.t === 'pull' || msg.t === 'cancel') calls.streamControl(msg);
}
port.on('message', onMessage);

await calls.warmUp();
port.postMessage({ t: 'ready' } satisfies WorkerOutbound);

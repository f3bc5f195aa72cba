/**
 * What one sandbox worker thread holds, created once by `worker.ts` and handed to the parts that
 * use it (no module-level mutable state): its QuickJS module and capped WASM memory, the memory it
 * shares with the pool, its outgoing message batch, and the guest calls waiting on the host.
 */
import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten';
import type { GuestChunks } from './guest/build.ts';
import type { Outbound } from './outbound.ts';
import type { Outbox } from './outbox.ts';
import type { Invocation, WorkerOutbound } from './protocol.ts';
import type { LogEntry } from './redact.ts';

/** One release's QuickJS runtime and context, kept warm between calls. */
export type Instance = {
  releaseId: string;
  /** `__dispatch`, looked up once. */
  dispatch: QuickJSHandle;
  /** The string `fetch` (the kind of almost every call), made once. */
  fetchKind?: QuickJSHandle;
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  handlers: QuickJSHandle;
  /** The invocation whose guest code is running now, for host functions. */
  current: Call | undefined;
  timers: Map<number, { timer: ReturnType<typeof setTimeout>; call: Call }>;
  inflight: number;
  /** CPU billed to its calls since its memory was last measured, and the worker's WASM memory size then. */
  cpuSinceMeasureMs: number;
  measuredAtWasmBytes: number;
  /** Bytes its runtime held when last measured (after loading, then as calls are checked against the cap). */
  usedBytes: number;
  /** Out of service (timed out, or over its memory cap): disposed once no call holds its handles. */
  retired?: boolean;
  /** Platform code (a prelude chunk) is running: not interrupted, not billed. */
  platformWork?: boolean;
  /** `crypto.subtle` keys app code holds, by the id its CryptoKey carries. */
  keys?: Map<number, import('node:crypto').webcrypto.CryptoKey>;
  /** Imports by their exact arguments, and back: the same import again gives the same live key. */
  keyImports?: { byArgs: Map<string, number>; byId: Map<number, string> };
  /** How many CryptoKeys of the app each key id was handed out in (each collected one is reported). */
  keyHolders?: Map<number, number>;
  nextKeyId?: number;
};

/** One invocation in progress. */
export type Call = {
  inv: Invocation;
  hostCalls: number;
  /** Characters of JSON its platform calls sent: structured arguments, and file uploads' (see HOST_CALL_ARGS). */
  argsSent?: { structured: number; upload: number };
  logs: LogEntry[];
  secretsRead: Set<string>;
  /** CPU time its segments used (the thread's, not wall-clock time), and its crypto.subtle operations took. */
  cpuUsedMs: number;
  /** Of `cpuUsedMs`, what its crypto.subtle operations took (their time from start to answer, see subtle.ts). */
  subtleMs?: number;
  /** When the running segment began: wall-clock time (the interrupt's cheap first check) and the thread's CPU clock. */
  segmentStart: number;
  segmentCpuStart: number;
  /** The CPU limit's interrupt fired: the call ends after this segment, whatever its promises do. */
  cpuExceeded?: boolean;
  done: boolean;
  /** What waits on the guest (the handler's promise, a stream's pump, an upload's pulls), woken when a segment ran or the call ended. */
  waiters?: (() => void)[];
  /** A streamed answer being sent: pulls the pool asked for, whether the visitor went away, bytes sent, and the waiting pump's wake-up. */
  stream?: { pulls: number; cancelled: boolean; bytes: number };
  /** Its outbound requests: how many were begun, how many run now, those waiting for a slot, and each one's abort. */
  outbound?: {
    count: number;
    inFlight: number;
    queue: (() => void)[];
    running: Map<number, AbortController>;
    /** response bodies not read to their end yet, by the guest's fetch id */
    bodies: Map<number, { reader: ReadableStreamDefaultReader<Uint8Array>; host: string }>;
  };
};

export type PendingHostCall = {
  deferred: ReturnType<QuickJSContext['newPromise']>;
  inst: Instance;
  call: Call;
};

export type WorkerState = {
  quickjs: QuickJSWASMModule;
  /** which build `quickjs` is (engine-variant.ts) */
  engine: 'own' | 'stock';
  /** This worker's WASM memory, shared by all its instances and capped (see worker.ts). */
  wasmMemory: WebAssembly.Memory;
  /** Shared with the pool: [0] when guest code started running (0 = idle), [1] last invocation begun, [2] the one running, [3] spare ready, [4] this thread's id, [5] invocations begun (the pool counts those sent). */
  shared: Float64Array;
  /** Warm instances kept: as many as fit in `instanceBudgetBytes` (measured), never more than `maxInstances`. */
  maxInstances: number;
  instanceBudgetBytes: number;
  prelude: string;
  /** The prelude's lazily loaded chunks, by name (guest/build.ts). */
  chunks: GuestChunks;
  outbox: Outbox<WorkerOutbound>;
  /** Guest promises waiting on a host call, by call id. */
  hostCalls: Map<number, PendingHostCall>;
  nextHostCallId: number;
  /** The WASM module is not trustworthy any more: answer what is finished, take nothing new. */
  poisoned: boolean;
  /** When this worker last received or answered something. */
  lastActivity: number;
  /** Wall-clock time this worker has spent running guest code, a running total (segments; see subtle.ts for its use). */
  busyMs: number;
  /** App code's outbound fetch (policy from the pool). */
  outbound: Outbound;
  /** App code's crypto.subtle operations, one at a time (`createSubtleRunner` in subtle.ts, which imports this file). */
  subtle: {
    run(
      inst: Instance,
      call: Call,
      method: string,
      argsJson: string,
    ): Promise<{ value: string; bytes: ArrayBuffer }>;
  };
  /** The limits the next blank instance is made with (the last release's). */
  spareLimits: { memoryBytes: number; stackBytes: number };
};

/** The WASM module failed in a way that leaves it untrustworthy. */
export class Poisoned extends Error {}

/** The release's module did not load (its own error, reported to the owner). */
export class LoadError extends Error {
  readonly guestStack?: string;
  constructor(message: string, guestStack?: string) {
    super(message);
    this.guestStack = guestStack;
  }
}

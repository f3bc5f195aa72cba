import type { FetchPolicy } from './outbound.ts';
import type { LogEntry } from './redact.ts';

export type { FetchPolicy };

/**
 * The clock of the state the pool and a worker share: epoch milliseconds to the microsecond, as
 * `TIME_ORIGIN + performance.now()` (every thread of the process has the same `timeOrigin`).
 */
export const TIME_ORIGIN = performance.timeOrigin;

/** Messages between the sandbox pool (main thread) and its worker threads. */
export type SandboxFlags = {
  appUsers: boolean;
  publicStores: string[];
  countryHeader?: string;
  /** the release's bindings by the name app code reads (`env.CACHE`) */
  bindings?: Record<string, { type: 'kv' | 'queue' | 'r2' | 'd1'; name: string }>;
};
export type Limits = { cpuMs: number; memoryBytes: number; stackBytes: number; wallMs: number };

/** An app instance's memory and stack when nothing says otherwise (PLATFORM_SANDBOX_MEMORY_MB's default). */
export const DEFAULT_INSTANCE_LIMITS = {
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 512 * 1024,
} as const;

/** The request a `fetch` handler answers (jobs and webhooks are given one too, which they do not read). */
export type CallRequest = {
  method: string;
  url: string;
  headers: [string, string][];
  body?: ArrayBuffer;
  user?: { id: string; email: string; roles: string[]; verified: boolean } | null;
};

/** A call as the worker runs it (it crosses as an `InvocationWire`). */
export type Invocation = {
  id: number;
  /** `load` only evaluates the module (publish-time check); the others call that export. */
  handler: 'fetch' | 'job' | 'webhook' | 'queue' | 'load';
  /** What the handler is given: for `fetch` the request (`requestInput`), for job and webhook handlers the event object, as JSON. */
  input: string;
  /** The request's body, for `fetch`. */
  body?: ArrayBuffer;
  app: { app_id: string; origin: string; release_id: string };
  release: {
    releaseId: string;
    entry: string;
    sources?: Record<string, string>;
    /** Its modules as the engine's bytecode, made at publish (module-bytecode.ts): loaded instead of compiling `sources`. */
    bytecode?: Uint8Array;
  };
  /** For `load`: also compile the modules to bytecode and answer it as the body (the own engine only). */
  compile?: boolean;
  /** What the release declares that shapes ctx: app users (ctx.auth) and its public file stores. */
  flags?: SandboxFlags;
  secrets: Record<string, string>;
  limits: Limits;
};

export type FailureKind =
  | 'exception'
  | 'timeout'
  | 'memory'
  | 'stack'
  | 'crash'
  | 'load'
  | 'no-handler'
  | 'missing-sources'
  | 'killed'
  | 'retry'
  | 'quarantined'
  | 'overloaded'
  | 'stream_too_large';

/** Bytes one streamed response may carry. */
export const MAX_STREAMED_BYTES = 64 * 1024 * 1024;

/** How a streamed response ended (after its head was answered). */
export type StreamEnd = {
  ok: boolean;
  error?: { kind: FailureKind; message: string; stack?: string };
  logs?: LogEntry[];
  cpuMs?: number;
  fetches?: number;
  bytes?: number;
  poisoned?: boolean;
};

export type InvocationResult = {
  ok: boolean;
  /**
   * `text` when the app answered a string (encoded by the host), else `body` bytes; or, when the app
   * answered a stream, `streaming` from the worker, which the pool turns into `stream` (the bytes as
   * the visitor pulls them) and `streamEnd` (how it ended: logs, CPU and any failure come then).
   */
  response?: {
    status: number;
    headers: [string, string][];
    body?: ArrayBuffer;
    text?: string;
    streaming?: boolean;
    stream?: ReadableStream<Uint8Array>;
    streamEnd?: Promise<StreamEnd>;
  };
  error?: { kind: FailureKind; message: string; stack?: string };
  /** An answer of status 5xx: the first line of its text, redacted of the app's secrets (set by the runtime, for the owner's event). */
  statusLine?: string;
  logs?: LogEntry[];
  cpuMs?: number;
  /** Outbound requests the call made (counted per app by the caller). */
  fetches?: number;
  /** The worker's WASM module is not trustworthy any more: the pool must replace the worker. */
  poisoned?: boolean;
  /** Set on the call whose crash put its release in quarantine. */
  quarantine?: { mode: 'own_worker' | 'refused'; seconds: number };
};

/** An invocation as it crosses to the worker (`wire.ts` encodes and decodes it). */
export type InvocationWire = [
  id: number,
  handler: Invocation['handler'],
  input: string,
  body: ArrayBuffer | undefined,
  appId: string,
  origin: string,
  appReleaseId: string,
  releaseId: string,
  entry: string,
  sources: Record<string, string> | undefined,
  flags: Invocation['flags'],
  secrets: Record<string, string>,
  cpuMs: number,
  memoryBytes: number,
  stackBytes: number,
  wallMs: number,
  bytecode?: Uint8Array,
  compile?: boolean,
];

/** What a result carries beside its response head and body, sent only when one of them is there. */
export type Rare = Pick<InvocationResult, 'error' | 'logs' | 'poisoned' | 'quarantine'> & {
  streaming?: true;
};

/** A result as it crosses back to the pool. */
export type ResultWire = [
  id: number,
  ok: boolean,
  status: number | undefined,
  headers: [string, string][] | undefined,
  text: string | undefined,
  body: ArrayBuffer | undefined,
  cpuMs: number | undefined,
  fetches: number | undefined,
  rare: Rare | undefined,
];

export type WorkerInbound =
  | InvocationWire
  /** Several messages sent together (one crossing per event-loop turn under load). */
  | { t: 'batch'; msgs: WorkerInbound[] }
  | { t: 'evict'; releaseId: string }
  /** The visitor wants the next chunk of a streamed response / went away. */
  | { t: 'pull'; id: number }
  | { t: 'cancel'; id: number }
  | {
      t: 'host-result';
      callId: number;
      ok: boolean;
      value?: string;
      bytes?: ArrayBuffer;
      error?: { code: string; message: string };
    };
export type WorkerOutbound =
  | { t: 'ready' }
  | { t: 'batch'; msgs: WorkerOutbound[] }
  | ResultWire
  /** A chunk of a streamed response, answering one pull; then its end. */
  | { t: 'chunk'; id: number; bytes: ArrayBuffer }
  | { t: 'end'; id: number; end: StreamEnd }
  /** Guest code awaits the answer of an asynchronous host function (args and value are JSON). */
  | {
      t: 'host-call';
      invocationId: number;
      callId: number;
      method: string;
      args: string;
      upload?: { bytes: ArrayBuffer; sha256: string };
    };

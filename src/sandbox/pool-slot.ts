/**
 * One worker thread as the pool sees it (`Slot`), its calls in flight, and the two things a worker
 * asks of the main thread mid-call that need no pool state: the visitor's side of a streamed
 * answer, and the platform calls of guest code.
 */
import type { Worker } from 'node:worker_threads';
import type { Outbox } from './outbox.ts';
import { HostBytes, ownBuffer } from './host-bytes.ts';
import type {
  CallRequest,
  Invocation,
  InvocationResult,
  Limits,
  StreamEnd,
  WorkerInbound,
  WorkerOutbound,
} from './protocol.ts';

export type InvokeInput = Omit<Invocation, 'id' | 'limits' | 'release' | 'input' | 'body'> & {
  request: CallRequest;
  /** For job and webhook handlers: the event object, as JSON (given to the handler instead of the request). */
  event?: string;
  release: { releaseId: string; entry: string };
  /** Server module sources of the release; loaded only when a worker does not hold it yet. */
  loadSources: () => Promise<Record<string, string>>;
  /** The release's modules as this engine's bytecode, when it has them (read with the sources; a failure to read them only means compiling the sources). */
  loadBytecode?: (() => Promise<Uint8Array | undefined>) | undefined;
  onHostCall?: HostCallHandler;
  limits?: Partial<Limits>;
};

/** `changed`: the call made a platform call that changes something, so it must not run twice. */
export type Pending = {
  resolve: (r: InvocationResult) => void;
  releaseId: string;
  id: number;
  /** The watchdog's limit for this call's stretches (`killAfterMs`). */
  killAfterMs: number;
  /** When the call's wall-clock limit ends (performance.now()), counted from when the pool took it. */
  deadline: number;
  /** That limit, ms, for the message that ends it. */
  wallMs: number;
  onHostCall?: HostCallHandler;
  changed?: boolean;
};

/** Platform calls that only read: a call that made no other may safely run again after its worker died under it. */
const READ_ONLY_CALLS = new Set([
  'data.get',
  'data.list',
  'files.signedUrl',
  'kv.get',
  'kv.getBulk',
  'kv.list',
  'r2.head',
  'r2.get',
  'r2.read',
  'r2.list',
  'denokv.get',
  'denokv.list',
  'blobs.get',
  'blobs.list',
]);

/** A file upload's bytes, copied and hashed by the sandbox worker (never parsed from JSON on this thread). */
export type HostUpload = { bytes: Buffer; sha256: Buffer };
/** Answers the guest's asynchronous platform calls (ctx.jobs, ...). Throw `{ code, message }` to fail one. */
export type HostCallHandler = (
  method: string,
  args: unknown[],
  upload?: HostUpload,
) => Promise<unknown>;

/** A streamed answer arriving from a worker. */
export type StreamIn = {
  chunk(bytes: ArrayBuffer): void;
  end(end: StreamEnd): void;
  /** the call's platform calls go on while its body streams (a body read from R2, a KV read) */
  onHostCall?: HostCallHandler;
};

export type Slot = {
  /** Position in the shared pool, or -1 for a quarantined release's own worker. */
  index: number;
  /** The quarantined release this worker belongs to. */
  isolatedFor?: string;
  /** Shared with the worker, read without a message: its slots are named in shared-state.ts. */
  state: Float64Array;
  /** The running stretch of guest code the watchdog has seen: when it began, when it was first seen, and the thread's CPU time then. */
  watched?: { since: number; seenAt: number; cpuMs: number | undefined };
  /** Calls sent with sources and not answered yet: each may take the worker's spare. */
  coldInFlight: number;
  /** Invocations sent to it (`BEGUN_COUNT` counts those it began: the rest wait in its queue). */
  sent: number;
  /** The CPU its recent calls took, ms (a moving average): how long a call queued there waits per call ahead of it. */
  callMs: number;
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, Pending>;
  /** Streamed answers still flowing from this worker, by invocation id. */
  streams: Map<number, StreamIn>;
  /** releases this worker has been sent sources for (it may have evicted some since), oldest first, at most `MAX_LOADED` */
  loaded: Set<string>;
  alive: boolean;
  /** Messages for the worker, sent together at the end of this event-loop turn. */
  outbox: Outbox<WorkerInbound>;
};

/**
 * The visitor's side of a streamed answer: a ReadableStream that asks the worker for one chunk per
 * read (so nothing piles up faster than the visitor takes it) and tells it when the visitor goes
 * away, and a promise of how the stream ended.
 */
export function streamIn(
  slot: Slot,
  id: number,
  onHostCall?: HostCallHandler,
): { stream: ReadableStream<Uint8Array>; streamEnd: Promise<StreamEnd> } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let waiting: (() => void) | undefined;
  let endWith!: (end: StreamEnd) => void;
  const streamEnd = new Promise<StreamEnd>((resolve) => (endWith = resolve));
  // over: the worker said it ended; gone: the visitor cancelled (chunks still on their way are dropped)
  let over = false;
  let gone = false;
  const settle = (fn: () => void) => {
    try {
      fn();
    } catch {
      // the stream was closed from the visitor's side meanwhile
    }
  };
  const handle: StreamIn = {
    onHostCall,
    chunk(bytes) {
      if (over || gone) return;
      settle(() => controller.enqueue(new Uint8Array(bytes)));
      waiting?.();
    },
    end(end) {
      if (over) return;
      over = true;
      slot.streams.delete(id);
      // the HTTP server prints a failed body's error: name the kind only, never what the app said
      if (!gone)
        settle(() =>
          end.ok
            ? controller.close()
            : controller.error(
                new Error(`app response stream ended early (${end.error?.kind ?? 'failed'})`),
              ),
        );
      waiting?.();
      endWith(end);
    },
  };
  slot.streams.set(id, handle);
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => {
        controller = c;
      },
      pull: () =>
        new Promise<void>((resolve) => {
          waiting = resolve;
          slot.outbox.push({ t: 'pull', id });
        }),
      cancel: () => {
        gone = true;
        waiting?.();
        if (!over && slot.alive) slot.outbox.push({ t: 'cancel', id });
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, streamEnd };
}

export function answerHostCall(slot: Slot, msg: Extract<WorkerOutbound, { t: 'host-call' }>): void {
  const pending = slot.pending.get(msg.invocationId);
  const reply = (r: Omit<Extract<WorkerInbound, { t: 'host-result' }>, 't' | 'callId'>) => {
    slot.outbox.push({ t: 'host-result', callId: msg.callId, ...r }, r.bytes ? [r.bytes] : []);
  };
  if (pending && !READ_ONLY_CALLS.has(msg.method)) pending.changed = true;
  const onHostCall = pending?.onHostCall ?? slot.streams.get(msg.invocationId)?.onHostCall;
  if (!onHostCall)
    return reply({
      ok: false,
      error: { code: 'not_available', message: `${msg.method} is not available here` },
    });
  let args: unknown[];
  try {
    args = JSON.parse(msg.args) as unknown[];
  } catch {
    return reply({
      ok: false,
      error: { code: 'invalid_request', message: 'arguments must be JSON' },
    });
  }
  const upload = msg.upload && {
    bytes: Buffer.from(msg.upload.bytes),
    sha256: Buffer.from(msg.upload.sha256, 'hex'),
  };
  onHostCall(msg.method, args, upload).then(
    (value) =>
      value instanceof HostBytes
        ? reply({
            ok: true,
            value: JSON.stringify(value.value ?? null),
            bytes: ownBuffer(value.bytes),
          })
        : reply({ ok: true, value: JSON.stringify(value ?? null) }),
    (err: unknown) => {
      const e = err as { code?: unknown; message?: unknown };
      reply({
        ok: false,
        error: {
          code: typeof e?.code === 'string' ? e.code : 'internal_error',
          message: typeof e?.message === 'string' ? e.message : 'platform call failed',
        },
      });
    },
  );
}

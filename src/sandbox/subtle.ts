/**
 * `crypto.subtle` for app code, carried out by Node's Web Crypto in the worker: every algorithm and
 * key format Node has. Keys live here, in the instance's table, and the guest holds their ids (a
 * module may keep an imported key between calls, as jose does). Arguments cross as JSON in which
 * bytes are `{"$b64": "..."}` and keys `{"$key": id}`; results come back the same way, with a
 * byte result as the bytes of the answer.
 *
 * Node runs most of these on libuv's thread pool, which the whole process shares (4 threads: file
 * reads, DNS lookups, zlib, password hashing) and which nothing can interrupt. So app code's crypto
 * is bounded three ways (see `createSubtleRunner`): each operation's cost by its parameters (the
 * caps below), its time billed to the call's CPU budget, and one operation at a time per worker,
 * taking turns between releases. Operations of microseconds skip all that (`runSubtleNow`).
 */
import { createHash, createHmac, KeyObject, timingSafeEqual, webcrypto } from 'node:crypto';
import { startBill } from './threadpool-clock.ts';
import type { Call, Instance } from './worker-state.ts';

type CryptoKey = webcrypto.CryptoKey;
const subtle = webcrypto.subtle;

/** Keys one instance may hold. */
export const MAX_KEYS = 10_000;
/** Imports whose arguments are longer than this (big RSA keys in JWK) are not remembered for reuse. */
const MAX_IMPORT_CACHE_ARGS = 16 * 1024;

/**
 * What one operation may cost. PBKDF2 iterations: Cloudflare Workers' limit, so a hash made there
 * verifies here. RSA: generating a key grows steeply with its size (4,096 bits takes about a second,
 * 8,192 minutes) and a private operation with the cube of the size, so both are bounded by the
 * modulus. Argon2 (Node 24 and later): its memory (KiB) is allocated on the host for the operation,
 * so memory and passes are bounded together (`npm run bench:sandbox` has the costs).
 */
export const COST_LIMITS = {
  pbkdf2Iterations: 100_000,
  rsaGenerateBits: 4096,
  rsaKeyBits: 8192,
  argon2MemoryKib: 65_536,
  argon2Passes: 10,
  argon2Parallelism: 4,
} as const;

/**
 * Operations one call may have waiting or running, and the bytes of their arguments (the host holds a
 * copy of each). The count is a backstop for the host's bookkeeping, far past what code awaits at
 * once (WPT's files queue dozens): a call's operations are bounded by its CPU budget, which each one's
 * time is billed to, and their arguments by the bytes.
 */
export const QUEUE_LIMITS = {
  perCallOps: 4096,
  perCallBytes: 64 * 1024 * 1024,
  perWorkerBytes: 256 * 1024 * 1024,
} as const;

export type SubtleResult = { value: string; bytes: ArrayBuffer };

/** A failure app code sees as a DOMException of that name. */
export class SubtleError extends Error {
  readonly domName: string;
  constructor(domName: string, message: string) {
    super(message);
    this.domName = domName;
  }
}

function decode(inst: Instance, v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => decode(inst, x));
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.$b64 === 'string') return new Uint8Array(Buffer.from(o.$b64, 'base64'));
    if (typeof o.$key === 'number') {
      const key = inst.keys?.get(o.$key);
      if (!key) throw new SubtleError('InvalidAccessError', 'This CryptoKey is not usable here.');
      return key;
    }
    return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, decode(inst, x)]));
  }
  return v;
}

function encode(v: unknown): unknown {
  if (v instanceof Uint8Array || v instanceof ArrayBuffer)
    return {
      $b64: Buffer.from(v instanceof ArrayBuffer ? new Uint8Array(v) : v).toString('base64'),
    };
  if (Array.isArray(v)) return v.map(encode);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
  return v;
}

/** A key as the guest's CryptoKey describes it. */
const described = (id: number, key: CryptoKey) => ({
  $key: id,
  type: key.type,
  extractable: key.extractable,
  algorithm: encode(key.algorithm),
  usages: key.usages,
});

/**
 * One CryptoKey of the app that carried key `id` was collected; when none is left the key and the
 * import it came from are forgotten. The count is the host's (one per answer that carried the id),
 * so an import answered with a live id just as its last holder goes never finds it gone.
 */
export function forgetKey(inst: Instance, id: number): void {
  const n = (inst.keyHolders?.get(id) ?? 0) - 1;
  if (n > 0) {
    inst.keyHolders!.set(id, n);
    return;
  }
  inst.keyHolders?.delete(id);
  if (!inst.keys?.delete(id)) return;
  const from = inst.keyImports?.byId.get(id);
  if (from !== undefined) {
    inst.keyImports!.byId.delete(id);
    inst.keyImports!.byArgs.delete(from);
  }
}

/**
 * The key id an import with exactly these arguments already made (live), so importing the same
 * secret again (jose does it for every sign and verify) holds one key, not one per call.
 */
function importedBefore(inst: Instance, argsJson: string): number | undefined {
  const id = inst.keyImports?.byArgs.get(argsJson);
  return id !== undefined && inst.keys?.has(id) ? id : undefined;
}

function keep(inst: Instance, key: CryptoKey, importArgs?: string): unknown {
  const keys = (inst.keys ??= new Map());
  if (keys.size >= MAX_KEYS)
    throw new SubtleError(
      'QuotaExceededError',
      `at most ${MAX_KEYS} keys per app instance may be in use at once`,
    );
  const id = (inst.nextKeyId = (inst.nextKeyId ?? 0) + 1);
  keys.set(id, key);
  (inst.keyHolders ??= new Map()).set(id, 1);
  if (importArgs !== undefined && importArgs.length <= MAX_IMPORT_CACHE_ARGS) {
    const imports = (inst.keyImports ??= { byArgs: new Map(), byId: new Map() });
    imports.byArgs.set(importArgs, id);
    imports.byId.set(id, importArgs);
  }
  return described(id, key);
}

const NO_BYTES = new ArrayBuffer(0);
const answer = (value: unknown, bytes: ArrayBuffer = NO_BYTES): SubtleResult => ({
  value: JSON.stringify(value),
  bytes,
});

/** The SubtleCrypto methods, called with arguments app code chose (Node validates them, as a browser would). */
const METHODS = [
  'digest',
  'sign',
  'verify',
  'encrypt',
  'decrypt',
  'deriveBits',
  'deriveKey',
  'generateKey',
  'importKey',
  'exportKey',
  'wrapKey',
  'unwrapKey',
] as const;
type Method = (typeof METHODS)[number];
const call = subtle as unknown as Record<Method, (...args: unknown[]) => Promise<unknown>>;

const nameOf = (alg: unknown): string =>
  (typeof alg === 'string'
    ? alg
    : alg && typeof alg === 'object'
      ? String((alg as { name?: unknown }).name)
      : ''
  ).toUpperCase();

/** A parameter as Web IDL reads a number from JSON (a numeric string counts too); NaN otherwise. */
const num = (v: unknown): number =>
  typeof v === 'number'
    ? v
    : typeof v === 'string' || typeof v === 'boolean'
      ? Number(v)
      : Number.NaN;

/** Refuses, before it starts, an operation whose parameters ask for more work than `COST_LIMITS` allow. */
function checkCost(method: string, args: unknown[]): void {
  if (method !== 'deriveBits' && method !== 'deriveKey' && method !== 'generateKey') return;
  const name = nameOf(args[0]);
  const p = (args[0] && typeof args[0] === 'object' ? args[0] : {}) as Record<string, unknown>;
  const refuse = (message: string) => {
    throw new SubtleError('NotSupportedError', message);
  };
  if (method === 'generateKey') {
    if (name.startsWith('RSA') && num(p.modulusLength) > COST_LIMITS.rsaGenerateBits)
      refuse(
        `RSA keys above ${COST_LIMITS.rsaGenerateBits} bits cannot be generated here (requested ${p.modulusLength})`,
      );
  } else if (name === 'PBKDF2') {
    if (num(p.iterations) > COST_LIMITS.pbkdf2Iterations)
      refuse(
        `PBKDF2 iteration counts above ${COST_LIMITS.pbkdf2Iterations} are not supported (requested ${p.iterations})`,
      );
  } else if (name.startsWith('ARGON2')) {
    const {
      argon2MemoryKib: memory,
      argon2Passes: passes,
      argon2Parallelism: parallelism,
    } = COST_LIMITS;
    if (num(p.memory) > memory || num(p.passes) > passes || num(p.parallelism) > parallelism) {
      refuse(
        `Argon2 is limited to memory ${memory} (KiB), passes ${passes} and parallelism ${parallelism} (requested ${p.memory}, ${p.passes}, ${p.parallelism})`,
      );
    }
  }
}

/** An imported or unwrapped RSA key larger than `COST_LIMITS.rsaKeyBits` is refused (every use of it would cost too much). */
function checkKey(key: CryptoKey): void {
  const bits = (key.algorithm as { modulusLength?: number }).modulusLength;
  if (typeof bits === 'number' && bits > COST_LIMITS.rsaKeyBits)
    throw new SubtleError(
      'NotSupportedError',
      `RSA keys above ${COST_LIMITS.rsaKeyBits} bits are not supported (this one has ${bits})`,
    );
}

/** Runs `method` with the decoded arguments. */
export async function runSubtle(
  inst: Instance,
  method: string,
  argsJson: string,
): Promise<SubtleResult> {
  if (!(METHODS as readonly string[]).includes(method))
    throw new SubtleError('NotSupportedError', `crypto.subtle.${method} is not supported`);
  // an import queued before its twin's answer made the key
  const before = method === 'importKey' ? runSubtleNow(inst, method, argsJson) : undefined;
  if (before) return before;
  const args = decode(inst, JSON.parse(argsJson)) as unknown[];
  checkCost(method, args);
  let out: unknown;
  try {
    out = await call[method as Method](...args);
  } catch (err) {
    if (err instanceof SubtleError) throw err;
    const e = err as { name?: string; message?: string };
    // Node answers some bad arguments with TypeError and others with DOMExceptions; both keep their
    // name, with Node's misspellings (`InvalidAccessException`) put as the standard names them
    const name =
      e.name && e.name !== 'Error' ? e.name.replace(/Exception$/, 'Error') : 'OperationError';
    throw new SubtleError(name, e.message ?? String(err));
  }
  if (out instanceof ArrayBuffer) return answer({ bytes: true }, out);
  if (typeof out === 'boolean') return answer({ bool: out });
  if (out instanceof globalThis.CryptoKey) {
    checkKey(out as CryptoKey);
    return answer({
      key: keep(inst, out as CryptoKey, method === 'importKey' ? argsJson : undefined),
    });
  }
  if (out && typeof out === 'object' && 'privateKey' in out) {
    const pair = out as webcrypto.CryptoKeyPair;
    return answer({
      pair: { publicKey: keep(inst, pair.publicKey), privateKey: keep(inst, pair.privateKey) },
    });
  }
  return answer({ jwk: out }); // exportKey('jwk')
}

/** Node's hash names for the Web Crypto ones the synchronous path computes. */
const HASHES: Record<string, string> = {
  'SHA-1': 'sha1',
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
};
/** Data a synchronous digest or HMAC takes at most: a few milliseconds of this thread, uninterruptible. */
export const SYNC_MAX_BYTES = 1024 * 1024;
/** The longest arguments that can hold such inputs: two of them in base64, and room for the rest. */
const SYNC_MAX_ARGS_CHARS = 2 * Math.ceil(SYNC_MAX_BYTES / 3) * 4 + 64 * 1024;

const hashOf = (alg: unknown) => HASHES[typeof alg === 'string' ? alg : nameOfHash(alg)];
const nameOfHash = (alg: unknown) =>
  alg && typeof alg === 'object' ? String((alg as { name?: unknown }).name) : '';
const keyObjects = new WeakMap<CryptoKey, KeyObject>();
const secretOf = (key: CryptoKey) => {
  let k = keyObjects.get(key);
  if (!k) keyObjects.set(key, (k = KeyObject.from(key)));
  return k;
};
const small = (v: unknown): v is Uint8Array =>
  v instanceof Uint8Array && v.length <= SYNC_MAX_BYTES;
const bufferOf = (b: Buffer): ArrayBuffer =>
  b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/**
 * The operations whose answer costs microseconds, answered at once on this thread instead of a
 * trip through libuv's pool: an import made before (jose imports the same secret for every sign
 * and verify), a digest and an HMAC sign or verify of at most `SYNC_MAX_BYTES`. Their time is the
 * call's own CPU, as any guest code's. Anything else, or anything Node would refuse, is
 * `undefined`: the asynchronous path runs it and gives Node's own answer or error.
 */
export function runSubtleNow(
  inst: Instance,
  method: string,
  argsJson: string,
): SubtleResult | undefined {
  if (method === 'importKey') {
    const id = importedBefore(inst, argsJson);
    if (id === undefined) return undefined;
    inst.keyHolders!.set(id, (inst.keyHolders!.get(id) ?? 0) + 1);
    return answer({ key: described(id, inst.keys!.get(id)!) });
  }
  if (method !== 'digest' && method !== 'sign' && method !== 'verify') return undefined;
  // arguments too long to be small enough: not decoded here, only on the pool path
  if (argsJson.length > SYNC_MAX_ARGS_CHARS) return undefined;
  let args: unknown[];
  try {
    args = decode(inst, JSON.parse(argsJson)) as unknown[];
  } catch {
    return undefined;
  }
  if (method === 'digest') {
    // MD5 as workerd offers it beside the standard hashes (R2's checksums are MD5s), up to the sync size
    const named = typeof args[0] === 'string' ? args[0] : nameOfHash(args[0]);
    const hash = hashOf(args[0]) ?? (named.toUpperCase() === 'MD5' ? 'md5' : undefined);
    if (!hash || args.length !== 2 || !small(args[1])) return undefined;
    return answer({ bytes: true }, bufferOf(createHash(hash).update(args[1]).digest()));
  }
  const [alg, key, a, b] = args;
  if (nameOf(alg) !== 'HMAC' || !(key instanceof globalThis.CryptoKey)) return undefined;
  const k = key as CryptoKey;
  const hash = hashOf((k.algorithm as { hash?: unknown }).hash);
  if (k.algorithm.name !== 'HMAC' || !hash || !k.usages.includes(method)) return undefined;
  if (method === 'sign') {
    if (args.length !== 3 || !small(a)) return undefined;
    return answer({ bytes: true }, bufferOf(createHmac(hash, secretOf(k)).update(a).digest()));
  }
  if (args.length !== 4 || !small(a) || !small(b)) return undefined;
  const mac = createHmac(hash, secretOf(k)).update(b).digest();
  return answer({ bool: mac.length === a.length && timingSafeEqual(mac, a) });
}

type Job = {
  inst: Instance;
  call: Call;
  method: string;
  argsJson: string;
  resolve(r: SubtleResult): void;
  reject(e: unknown): void;
};

/**
 * Runs a worker's Web Crypto operations one at a time, taking turns between releases (each release's
 * own in order), so app code can hold at most one of the process's pool threads per worker and an
 * app that queues many operations delays another app's by at most one of them. Each operation's time
 * (from its start to its answer, less the time this thread spent running guest code meanwhile, when the
 * answer could not be seen) is added to its call's CPU use, so a call gets as much crypto as
 * its CPU budget buys and then ends like any call over its budget (the next segment refuses to start,
 * see limits.ts). An operation whose call ended before its turn is dropped.
 */
export function createSubtleRunner(busyMs: () => number) {
  /** waiting jobs by release, in turn order (a release that was served goes to the back) */
  const waiting = new Map<string, Job[]>();
  const perCall = new WeakMap<Call, { ops: number; bytes: number }>();
  let queuedBytes = 0;
  let running = false;

  function next(): void {
    for (const [releaseId, jobs] of waiting) {
      waiting.delete(releaseId);
      const job = jobs.shift()!;
      if (jobs.length) waiting.set(releaseId, jobs);
      if (job.call.done) {
        release(job);
        job.reject(new SubtleError('AbortError', 'the call ended'));
        continue;
      }
      running = true;
      const bill = startBill(busyMs);
      // accounted before the guest hears of it: what it does next finds the time billed and the slot free
      const finished = () => {
        const ms = bill();
        job.call.cpuUsedMs += ms;
        job.call.subtleMs = (job.call.subtleMs ?? 0) + ms;
        release(job);
        running = false;
        next();
      };
      runSubtle(job.inst, job.method, job.argsJson).then(
        (r) => {
          finished();
          job.resolve(r);
        },
        (err: unknown) => {
          finished();
          job.reject(err);
        },
      );
      return;
    }
  }

  function release(job: Job): void {
    const c = perCall.get(job.call)!;
    c.ops--;
    c.bytes -= job.argsJson.length;
    queuedBytes -= job.argsJson.length;
  }

  return {
    /** Queues `method` for `call`; refused (QuotaExceededError) when the call or the worker has too much waiting. */
    run(inst: Instance, call: Call, method: string, argsJson: string): Promise<SubtleResult> {
      let c = perCall.get(call);
      if (!c) perCall.set(call, (c = { ops: 0, bytes: 0 }));
      const bytes = argsJson.length;
      if (c.ops >= QUEUE_LIMITS.perCallOps)
        return Promise.reject(
          new SubtleError(
            'QuotaExceededError',
            `at most ${QUEUE_LIMITS.perCallOps} crypto.subtle operations may wait at once in one call`,
          ),
        );
      if (
        c.bytes + bytes > QUEUE_LIMITS.perCallBytes ||
        queuedBytes + bytes > QUEUE_LIMITS.perWorkerBytes
      )
        return Promise.reject(
          new SubtleError(
            'QuotaExceededError',
            'too much data is waiting for crypto.subtle operations',
          ),
        );
      c.ops++;
      c.bytes += bytes;
      queuedBytes += bytes;
      return new Promise<SubtleResult>((resolve, reject) => {
        const jobs = waiting.get(inst.releaseId);
        const job = { inst, call, method, argsJson, resolve, reject };
        if (jobs) jobs.push(job);
        else waiting.set(inst.releaseId, [job]);
        if (!running) next();
      });
    },
  };
}

/**
 * `crypto.subtle` for app code, carried out by Node's Web Crypto in the worker: every algorithm and
 * key format Node has. Keys live here, in the instance's table, and the guest holds their ids (a
 * module may keep an imported key between calls, as jose does). Arguments cross as JSON in which
 * bytes are `{"$b64": "..."}` and keys `{"$key": id}`; results come back the same way, with a
 * byte result as the bytes of the answer.
 */
import { webcrypto } from 'node:crypto';
import type { Instance } from './worker-state.ts';

type CryptoKey = webcrypto.CryptoKey;
const subtle = webcrypto.subtle;

/** Keys one instance may hold. */
export const MAX_KEYS = 10_000;

export type SubtleResult = { value: string; bytes: ArrayBuffer };

/** A failure app code sees as a DOMException of that name. */
export class SubtleError extends Error {
  constructor(
    readonly domName: string,
    message: string,
  ) {
    super(message);
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
  if (v instanceof Uint8Array || v instanceof ArrayBuffer) return { $b64: Buffer.from(v instanceof ArrayBuffer ? new Uint8Array(v) : v).toString('base64') };
  if (Array.isArray(v)) return v.map(encode);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, encode(x)]));
  return v;
}

function keep(inst: Instance, key: CryptoKey): unknown {
  const keys = (inst.keys ??= new Map());
  if (keys.size >= MAX_KEYS) throw new SubtleError('QuotaExceededError', `at most ${MAX_KEYS} keys per app instance`);
  const id = (inst.nextKeyId = (inst.nextKeyId ?? 0) + 1);
  keys.set(id, key);
  return { $key: id, type: key.type, extractable: key.extractable, algorithm: encode(key.algorithm), usages: key.usages };
}

const NO_BYTES = new ArrayBuffer(0);
const answer = (value: unknown, bytes: ArrayBuffer = NO_BYTES): SubtleResult => ({ value: JSON.stringify(value), bytes });

/** The SubtleCrypto methods, called with arguments app code chose (Node validates them, as a browser would). */
const METHODS = ['digest', 'sign', 'verify', 'encrypt', 'decrypt', 'deriveBits', 'deriveKey', 'generateKey', 'importKey', 'exportKey', 'wrapKey', 'unwrapKey'] as const;
type Method = (typeof METHODS)[number];
const call = subtle as unknown as Record<Method, (...args: unknown[]) => Promise<unknown>>;

/** Runs `method` with the decoded arguments. */
export async function runSubtle(inst: Instance, method: string, argsJson: string): Promise<SubtleResult> {
  if (!(METHODS as readonly string[]).includes(method)) throw new SubtleError('NotSupportedError', `crypto.subtle.${method} is not supported`);
  const args = decode(inst, JSON.parse(argsJson)) as unknown[];
  let out: unknown;
  try {
    out = await call[method as Method](...args);
  } catch (err) {
    if (err instanceof SubtleError) throw err;
    const e = err as { name?: string; message?: string };
    // Node answers some bad arguments with TypeError and others with DOMExceptions; both keep their
    // name, with Node's misspellings (`InvalidAccessException`) put as the standard names them
    const name = e.name && e.name !== 'Error' ? e.name.replace(/Exception$/, 'Error') : 'OperationError';
    throw new SubtleError(name, e.message ?? String(err));
  }
  if (out instanceof ArrayBuffer) return answer({ bytes: true }, out);
  if (typeof out === 'boolean') return answer({ bool: out });
  if (out instanceof globalThis.CryptoKey) return answer({ key: keep(inst, out as CryptoKey) });
  if (out && typeof out === 'object' && 'privateKey' in out) {
    const pair = out as webcrypto.CryptoKeyPair;
    return answer({ pair: { publicKey: keep(inst, pair.publicKey), privateKey: keep(inst, pair.privateKey) } });
  }
  return answer({ jwk: out }); // exportKey('jwk')
}

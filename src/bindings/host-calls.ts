/**
 * App code's binding calls (`kv.*`, `queue.send`), checked against what its release declares: a namespace the
 * release does not bind is unreachable, whatever name the guest passes, and every key lives under
 * the calling app's id, so no spelling of a key reaches another app's data.
 */
import type { Deps } from '../deps.ts';
import { ApiError } from '../errors.ts';
import { HostBytes } from '../sandbox/host-bytes.ts';
import type { HostUpload } from '../sandbox/pool.ts';
import type { Bindings } from './declared.ts';
import { kvDelete, kvGet, kvGetBulk, kvList, kvPut } from './kv.ts';
import { queueSend } from './queues.ts';
import { d1Call } from '../sql/d1.ts';
import { denoKvCommit, denoKvGet, denoKvList } from './deno-kv.ts';
import { blobsCall } from './netlify-blobs.ts';
import { r2Delete, r2Get, r2Put, type Conditions, type PutOptions, type RangeAsk } from './r2.ts';
import { r2List } from './r2-list.ts';
import { r2PutAbort, r2PutBegin, r2PutChunk, r2PutEnd, r2Read, readPieces } from './r2-bytes.ts';
import { r2AbortUpload, r2CompleteUpload, r2CreateUpload, r2UploadPart } from './r2-multipart.ts';

export type BindingTarget = {
  appId: string;
  accountId: string;
  bindings: Bindings;
  /** the account's plan: its `queues.waiting.max` bounds each queue */
  planKey?: string;
};

/** A body up to this size crosses with a get's answer; a larger one is read in chunks. */
const INLINE_BODY_BYTES = 1024 * 1024;

const options = (o: unknown) => (o && typeof o === 'object' ? o : {}) as Record<string, unknown>;

function namespaceOf(target: BindingTarget, name: unknown): string {
  if (typeof name !== 'string' || !target.bindings.kv.includes(name))
    throw new ApiError('not_available', `No KV namespace is bound as ${String(name)}.`);
  return name;
}

function bucketOf(target: BindingTarget, name: unknown): string {
  if (typeof name !== 'string' || !Object.hasOwn(target.bindings.r2, name))
    throw new ApiError('not_available', `No R2 bucket is bound as ${String(name)}.`);
  return target.bindings.r2[name]!;
}

export function isBindingCall(method: string): boolean {
  return (
    method.startsWith('kv.') ||
    method.startsWith('r2.') ||
    method.startsWith('denokv.') ||
    method.startsWith('blobs.') ||
    method === 'd1.query' ||
    method === 'queue.send'
  );
}

export async function bindingCall(
  deps: Deps,
  target: BindingTarget,
  method: string,
  args: unknown[],
  upload: HostUpload | undefined,
): Promise<unknown> {
  switch (method) {
    case 'kv.get': {
      const got = await kvGet(
        deps,
        target,
        namespaceOf(target, args[0]),
        args[1],
        options(args[2]),
      );
      if (!got) return null;
      return new HostBytes(
        { metadata: got.metadata, ...(got.expiration ? { expiration: got.expiration } : {}) },
        got.bytes,
      );
    }
    case 'kv.getBulk':
      return kvGetBulk(deps, target, namespaceOf(target, args[0]), args[1], options(args[2]));
    case 'kv.put':
      return kvPut(
        deps,
        target,
        namespaceOf(target, args[0]),
        args[1],
        upload?.bytes ?? Buffer.alloc(0),
        options(args[2]),
      );
    case 'kv.delete':
      return kvDelete(deps, target, namespaceOf(target, args[0]), args[1]);
    case 'kv.list':
      return kvList(deps, target, namespaceOf(target, args[0]), options(args[1]));
    case 'r2.head':
    case 'r2.get': {
      const o = options(args[2]) as { range?: RangeAsk; onlyIf?: Conditions };
      const got = await r2Get(deps, target, bucketOf(target, args[0]), args[1], {
        ...o,
        head: method === 'r2.head',
      });
      if (!got) return null;
      if (!got.pieces) return { meta: got.meta };
      const range = got.meta.range!;
      // a large body stays with the platform: the guest reads it a chunk at a time (r2.read)
      if (range.length > INLINE_BODY_BYTES) return { meta: got.meta, stream: true };
      const bytes = await readPieces(
        deps,
        target.accountId,
        got.pieces,
        range.offset,
        range.length,
      );
      return new HostBytes(got.meta, bytes);
    }
    case 'r2.read': {
      const bytes = await r2Read(
        deps,
        target,
        bucketOf(target, args[0]),
        args[1],
        args[2],
        args[3],
        args[4],
      );
      return new HostBytes({ size: bytes.length }, bytes);
    }
    case 'r2.putBegin':
      return r2PutBegin(target, bucketOf(target, args[0]), args[1], options(args[2]) as PutOptions);
    case 'r2.putChunk':
      return r2PutChunk(deps, target, args[0], upload?.bytes ?? Buffer.alloc(0));
    case 'r2.putEnd':
      return r2PutEnd(deps, target, args[0]);
    case 'r2.putAbort':
      return r2PutAbort(target, args[0]);
    case 'r2.put':
      return r2Put(
        deps,
        target,
        bucketOf(target, args[0]),
        args[1],
        upload?.bytes ?? Buffer.alloc(0),
        options(args[2]) as PutOptions,
      );
    case 'r2.delete':
      return r2Delete(deps, target, bucketOf(target, args[0]), args[1]);
    case 'r2.list':
      return r2List(deps, target, bucketOf(target, args[0]), options(args[1]));
    case 'r2.createUpload':
      return r2CreateUpload(deps, target, bucketOf(target, args[0]), args[1], options(args[2]));
    case 'r2.uploadPart':
      return r2UploadPart(
        deps,
        target,
        bucketOf(target, args[0]),
        args[1],
        args[2],
        args[3],
        upload?.bytes ?? Buffer.alloc(0),
      );
    case 'r2.completeUpload':
      return r2CompleteUpload(deps, target, bucketOf(target, args[0]), args[1], args[2], args[3]);
    case 'r2.abortUpload':
      return r2AbortUpload(deps, target, bucketOf(target, args[0]), args[1], args[2]);
    // Deno KV needs no declaration: every app has its one database (Deno.openKv())
    case 'denokv.get':
      return denoKvGet(deps, target, args[0]);
    case 'denokv.list':
      return denoKvList(deps, target, options(args[0]));
    case 'denokv.commit':
      return denoKvCommit(deps, target, args[0], args[1]);
    // Netlify Blobs, as Deno KV, need no declaration: a store is made by its first write
    case 'blobs.get':
    case 'blobs.set':
    case 'blobs.delete':
    case 'blobs.list':
      return blobsCall(deps, target, method, args, upload?.bytes);
    case 'queue.send':
      return queueSend(deps, target, args[0], args[1], args[2]);
    case 'd1.query': {
      const name = args[0];
      if (typeof name !== 'string' || !Object.hasOwn(target.bindings.d1, name))
        throw new ApiError('not_available', `No D1 database is bound as ${String(name)}.`);
      return d1Call(deps, target.appId, target.bindings.d1[name]!, args[1], args[2]);
    }
    default:
      throw new ApiError('not_available', `${method} is not available`);
  }
}

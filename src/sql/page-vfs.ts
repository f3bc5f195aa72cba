/**
 * SQLite's own WebAssembly build (@sqlite.org/sqlite-wasm) with a file system of our own: a VFS,
 * `platform-chunks`, whose files are byte arrays in memory kept as fixed-size chunks, each write
 * marking its chunks dirty. The database file is the only file there is: what the store
 * (database.ts) loaded from Postgres, and what it writes back after a commit is exactly the dirty
 * chunks. A name that was not registered cannot be opened (no ATTACH of anything, no path of the
 * host's), and temporary files (sorting, temp tables) are anonymous and in memory only.
 */
import sqlite3InitModule from '@sqlite.org/sqlite-wasm';

export const VFS_NAME = 'platform-chunks';
/** The unit of storage and of a commit's write, SQLite's default page size. */
export const CHUNK_BYTES = 4096;

/** One file: its chunks, its size, and what changed since the last `takeDirty`. */
export class ChunkFile {
  readonly chunks = new Map<number, Uint8Array>();
  size = 0;
  readonly dirty = new Set<number>();
  /** the size changed since the last `takeDirty` (truncation drops chunks past it) */
  resized = false;

  static fromChunks(rows: { chunk_no: number; data: Uint8Array }[], size: number): ChunkFile {
    const f = new ChunkFile();
    for (const r of rows) f.chunks.set(r.chunk_no, new Uint8Array(r.data));
    f.size = size;
    return f;
  }

  read(into: Uint8Array, offset: number): number {
    const n = Math.max(0, Math.min(into.length, this.size - offset));
    for (let done = 0; done < n; ) {
      const at = offset + done;
      const chunk = this.chunks.get(Math.floor(at / CHUNK_BYTES));
      const inChunk = at % CHUNK_BYTES;
      const take = Math.min(CHUNK_BYTES - inChunk, n - done);
      if (chunk) into.set(chunk.subarray(inChunk, inChunk + take), done);
      else into.fill(0, done, done + take);
      done += take;
    }
    return n;
  }

  write(from: Uint8Array, offset: number): void {
    for (let done = 0; done < from.length; ) {
      const at = offset + done;
      const no = Math.floor(at / CHUNK_BYTES);
      let chunk = this.chunks.get(no);
      if (!chunk) this.chunks.set(no, (chunk = new Uint8Array(CHUNK_BYTES)));
      const inChunk = at % CHUNK_BYTES;
      const take = Math.min(CHUNK_BYTES - inChunk, from.length - done);
      chunk.set(from.subarray(done, done + take), inChunk);
      this.dirty.add(no);
      done += take;
    }
    if (offset + from.length > this.size) {
      this.size = offset + from.length;
      this.resized = true;
    }
  }

  truncate(size: number): void {
    const keep = Math.ceil(size / CHUNK_BYTES);
    for (const no of [...this.chunks.keys()]) if (no >= keep) this.chunks.delete(no);
    const last = this.chunks.get(keep - 1);
    if (last && size % CHUNK_BYTES) {
      last.fill(0, size % CHUNK_BYTES);
      this.dirty.add(keep - 1);
    }
    this.size = size;
    this.resized = true;
  }

  /** The chunks written since the last call, with their bytes, and the file's size. */
  takeDirty(): {
    chunks: { chunk_no: number; data: Uint8Array }[];
    size: number;
    changed: boolean;
  } {
    const chunks = [...this.dirty]
      .filter((no) => this.chunks.has(no))
      .sort((a, b) => a - b)
      .map((no) => ({ chunk_no: no, data: this.chunks.get(no)!.slice() }));
    const changed = chunks.length > 0 || this.resized;
    this.dirty.clear();
    this.resized = false;
    return { chunks, size: this.size, changed };
  }
}

type Sqlite3 = Awaited<ReturnType<typeof sqlite3InitModule>>;

/** Files by name: a database is registered here before it is opened, and only then can it be. */
const named = new Map<string, ChunkFile>();
/** Open files by the `sqlite3_file` pointer SQLite gave xOpen. */
const open = new Map<number, ChunkFile>();

let loading: Promise<Sqlite3> | undefined;

/** SQLite, with the VFS installed (once per thread). */
export function sqlite(): Promise<Sqlite3> {
  // SQLite's own warnings (a failed step, an interrupt) are the caller's errors, not log lines
  const quiet = () => {};
  (globalThis as { sqlite3ApiConfig?: unknown }).sqlite3ApiConfig ??= {
    debug: quiet,
    log: quiet,
    warn: quiet,
    error: quiet,
  };
  return (loading ??= sqlite3InitModule().then((s) => {
    install(s);
    return s;
  }));
}

export function registerFile(name: string, file: ChunkFile): void {
  named.set(name, file);
}

export function unregisterFile(name: string): void {
  named.delete(name);
}

function install(s: Sqlite3): void {
  const { capi, wasm } = s;
  const heap = () => wasm.heap8u();
  // the package's types lag its struct binder: its `$` members are set through a loose view
  type Loose = Record<string, unknown> & { pointer: number };
  const io = new capi.sqlite3_io_methods() as unknown as Loose;
  io.$iVersion = 1;
  const vfs = new capi.sqlite3_vfs() as unknown as Loose;
  vfs.$iVersion = 2;
  vfs.$szOsFile = (
    capi.sqlite3_file as unknown as { structInfo: { sizeof: number } }
  ).structInfo.sizeof;
  vfs.$mxPathname = 512;
  const fileOf = (p: number) => open.get(Number(p));
  s.vfs.installVfs({
    io: {
      struct: io,
      methods: {
        xClose: (p: number) => {
          open.delete(Number(p));
          return 0;
        },
        xRead: (p: number, dest: number, n: number, offset: bigint | number) => {
          const f = fileOf(p);
          if (!f) return capi.SQLITE_IOERR;
          const into = heap().subarray(Number(dest), Number(dest) + n);
          const got = f.read(into, Number(offset));
          if (got < n) {
            into.fill(0, got);
            return capi.SQLITE_IOERR_SHORT_READ;
          }
          return 0;
        },
        xWrite: (p: number, src: number, n: number, offset: bigint | number) => {
          const f = fileOf(p);
          if (!f) return capi.SQLITE_IOERR;
          f.write(heap().slice(Number(src), Number(src) + n), Number(offset));
          return 0;
        },
        xTruncate: (p: number, size: bigint | number) => {
          fileOf(p)?.truncate(Number(size));
          return 0;
        },
        // durability is the store's: a commit is acknowledged once its chunks are in Postgres
        xSync: () => 0,
        xFileSize: (p: number, out: number) => {
          wasm.poke64(out, BigInt(fileOf(p)?.size ?? 0));
          return 0;
        },
        // one connection per database, on one node (the lease): there is nobody to lock against
        xLock: () => 0,
        xUnlock: () => 0,
        xCheckReservedLock: (_p: number, out: number) => {
          wasm.poke32(out, 0);
          return 0;
        },
        xFileControl: () => capi.SQLITE_NOTFOUND,
        xSectorSize: () => CHUNK_BYTES,
        xDeviceCharacteristics: () => capi.SQLITE_IOCAP_UNDELETABLE_WHEN_OPEN,
      },
    },
    vfs: {
      struct: vfs,
      name: VFS_NAME,
      methods: {
        xOpen: (_vfs: number, zName: number, pFile: number, flags: number, pOutFlags: number) => {
          const name = zName ? (wasm.cstrToJs(zName) ?? '') : '';
          // temporary files have no name (or are asked for as such): in memory, never stored
          const temp =
            !name ||
            (flags &
              (capi.SQLITE_OPEN_TEMP_DB |
                capi.SQLITE_OPEN_TEMP_JOURNAL |
                capi.SQLITE_OPEN_TRANSIENT_DB |
                capi.SQLITE_OPEN_SUBJOURNAL)) !==
              0;
          const file = temp ? new ChunkFile() : named.get(name);
          if (!file) return capi.SQLITE_CANTOPEN;
          open.set(Number(pFile), file);
          const f = new capi.sqlite3_file(pFile) as unknown as Loose & { dispose(): void };
          f.$pMethods = io.pointer;
          f.dispose();
          if (pOutFlags) wasm.poke32(pOutFlags, flags);
          return 0;
        },
        xDelete: () => 0,
        xAccess: (_vfs: number, zName: number, _flags: number, out: number) => {
          wasm.poke32(out, named.has(wasm.cstrToJs(zName) ?? '') ? 1 : 0);
          return 0;
        },
        xFullPathname: (_vfs: number, zName: number, nOut: number, pOut: number) =>
          wasm.cstrncpy(pOut, zName, nOut) < nOut ? 0 : capi.SQLITE_CANTOPEN,
        xRandomness: (_vfs: number, n: number, out: number) => {
          crypto.getRandomValues(heap().subarray(Number(out), Number(out) + n));
          return n;
        },
        xSleep: () => 0,
        xCurrentTime: (_vfs: number, out: number) => {
          wasm.poke(out, 2440587.5 + Date.now() / 864e5, 'double');
          return 0;
        },
        xCurrentTimeInt64: (_vfs: number, out: number) => {
          wasm.poke64(out, BigInt(210866760000000 + Date.now()));
          return 0;
        },
        xGetLastError: () => 0,
      },
    },
  } as never);
}

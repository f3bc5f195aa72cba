/**
 * A release's server modules as the engine's bytecode (src/sandbox/module-bytecode.ts), stored when
 * it is published and read on a cold start on any node running the same engine build: reading it
 * takes a small part of what compiling the source does (`npm run bench:cold-start`). Stored
 * brotli-compressed (a function keeps its source text for `toString`, so the pack is several times
 * the source). Derived data: a release without it, or a node with another build, compiles the source.
 */
import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import type { Executor } from '../db/database.ts';

/**
 * Below this much server source a release gets no pack: compiling it takes about as long as the
 * read would (a small handler's cold start is the same either way, bench:cold-start), and its cold
 * starts make no query for one.
 */
export const BYTECODE_MIN_SOURCE_BYTES = 64 * 1024;

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

export async function storeBytecode(
  db: Executor,
  releaseId: string,
  engine: string,
  pack: Uint8Array,
): Promise<void> {
  const packed = await compress(pack, {
    // quality 4: a fifth of a gzip -6's time for a smaller result (measured on OpenNext's 24 MB pack)
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 4,
      [constants.BROTLI_PARAM_SIZE_HINT]: pack.length,
    },
  });
  await db
    .insertInto('release_bytecode')
    .values({ release_id: releaseId, engine, pack: packed, bytes: pack.length })
    .onConflict((oc) => oc.columns(['release_id', 'engine']).doNothing())
    .execute();
}

export async function readBytecode(
  db: Executor,
  releaseId: string,
  engine: string,
): Promise<Uint8Array | undefined> {
  const row = await db
    .selectFrom('release_bytecode')
    .select(['pack'])
    .where('release_id', '=', releaseId)
    .where('engine', '=', engine)
    .executeTakeFirst();
  if (!row) return undefined;
  const bytes = await decompress(row.pack);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

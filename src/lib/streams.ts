/** Reads a byte stream to its end, at most `maxBytes` (beyond that it cancels the stream and throws `tooLarge()`); `arrived` hears the size so far after each chunk and may refuse it by throwing (the stream is cancelled). */
export function readLimited(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  tooLarge: () => Error,
  arrived?: (size: number) => void,
): Promise<Uint8Array> {
  return readIterableLimited(chunksOf(reader), maxBytes, tooLarge, arrived);
}

/** A reader's chunks; leaving before its end cancels the stream. */
async function* chunksOf(reader: ReadableStreamDefaultReader<Uint8Array>) {
  let ended = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        return;
      }
      yield value;
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => {});
  }
}

/** `readLimited` for an async iterable of chunks (Node's stream of a request body): refusing it ends the stream, as cancelling a reader does. */
export async function readIterableLimited(
  source: AsyncIterable<Uint8Array>,
  maxBytes: number,
  tooLarge: () => Error,
  arrived?: (size: number) => void,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const value of source) {
    size += value.byteLength;
    if (size > maxBytes) throw tooLarge();
    arrived?.(size);
    chunks.push(value);
  }
  return joined(chunks, size);
}

/** The chunks as one array of its own (a lone chunk that is a view into a larger buffer is copied too). */
function joined(chunks: Uint8Array[], size: number): Uint8Array {
  const only = chunks.length === 1 ? chunks[0]! : undefined;
  if (only && only.byteOffset === 0 && only.byteLength === only.buffer.byteLength) return only;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

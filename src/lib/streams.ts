/** Reads a byte stream to its end, at most `maxBytes` (beyond that it cancels the stream and throws `tooLarge()`); `arrived` hears the size so far after each chunk and may refuse it by throwing (the stream is cancelled). */
export async function readLimited(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  tooLarge: () => Error,
  arrived?: (size: number) => void,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    try {
      arrived?.(size);
    } catch (err) {
      await reader.cancel().catch(() => {});
      throw err;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * How many bytes a PDF's Flate streams inflate to, counted before pdf.js sees the file and
 * stopped once past a cap: a 150 KB Flate bomb that inflates to 50 MB is found after
 * inflating `cap` bytes, in chunks (each read awaits, so the host keeps answering).
 */

/** One chunk of a stream's bytes fed to the inflater at a time. */
const FEED = 64 * 1024;

/** Where each stream's data begins (after `stream` and its end of line) whose dictionary names FlateDecode. */
function flateStarts(bytes: Uint8Array): number[] {
  // One character per byte, so string offsets are byte offsets.
  const s = new TextDecoder("latin1").decode(bytes);
  const out: number[] = [];
  let pos = 0;
  for (;;) {
    const at = s.indexOf("stream", pos);
    if (at < 0) return out;
    pos = at + 6;
    if (s.startsWith("end", at - 3)) continue;
    const eol = s.startsWith("\r\n", pos) ? 2 : s[pos] === "\n" || s[pos] === "\r" ? 1 : -1;
    if (eol < 0) continue;
    const dict = s.slice(Math.max(0, s.lastIndexOf("obj", at)), at);
    if (dict.includes("/FlateDecode")) out.push(pos + eol);
  }
}

/**
 * Inflates the zlib data starting at `start` (its end is where the deflate stream ends, not
 * a `/Length` the file could lie about) and returns the bytes it gave, at most `limit + 1`.
 */
async function inflateFrom(bytes: Uint8Array, start: number, limit: number, signal: AbortSignal | undefined): Promise<number> {
  let offset = start;
  const source = new ReadableStream<Uint8Array>({
    pull(c) {
      if (offset >= bytes.length) return c.close();
      c.enqueue(bytes.slice(offset, offset + FEED));
      offset += FEED;
    },
  });
  const reader = source.pipeThrough(new DecompressionStream("deflate")).getReader();
  let total = 0;
  try {
    while (total <= limit && !signal?.aborted) {
      const { value, done } = await reader.read();
      if (done) break;
      total += value.byteLength;
    }
  } catch {
    // Trailing bytes after the stream's end, or data that is not zlib: what came out counts.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return total;
}

/** Total inflated bytes of the PDF's Flate streams, stopping as soon as it passes `cap` (then it is `> cap`). */
export async function flateInflatedBytes(bytes: Uint8Array, cap: number, o: { signal?: AbortSignal; expired?: () => boolean } = {}): Promise<number> {
  let total = 0;
  for (const start of flateStarts(bytes)) {
    if (o.signal?.aborted || o.expired?.()) break;
    total += await inflateFrom(bytes, start, cap - total, o.signal);
    if (total > cap) break;
  }
  return total;
}

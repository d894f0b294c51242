/**
 * How many bytes a PDF's Flate streams inflate to, counted before pdf.js sees the file and
 * stopped once past a cap: a 150 KB Flate bomb that inflates to 50 MB is found after
 * inflating `cap` bytes, in chunks (each read awaits, so the host keeps answering).
 */

/**
 * Input fed to the inflater at a time. Small: an inflater that fails (workerd's on a
 * corrupt or over-long stream) drops the output of the piece it failed on, and that piece
 * is then counted as if it inflated at deflate's largest ratio.
 */
const FEED = 1024;
/** The most one byte of deflate data can inflate to (about 1032:1). */
const MAX_RATIO = 1032;

/** A stream's data: from after `stream` and its end of line, to its `/Length` (direct or an indirect object), else to `endstream`. */
interface StreamData {
  start: number;
  end: number;
}

/** The integer in object `n g`, or null. */
function indirectInteger(s: string, n: string, g: string): number | null {
  const m = new RegExp(`(?:^|\\s)${n}\\s+${g}\\s+obj\\s*(\\d+)\\s*endobj`).exec(s);
  return m ? Number(m[1]) : null;
}

/** The data of each stream whose dictionary names FlateDecode. */
function flateStreams(bytes: Uint8Array): StreamData[] {
  // One character per byte, so string offsets are byte offsets.
  const s = new TextDecoder("latin1").decode(bytes);
  const out: StreamData[] = [];
  let pos = 0;
  for (;;) {
    const at = s.indexOf("stream", pos);
    if (at < 0) return out;
    pos = at + 6;
    if (s.startsWith("end", at - 3)) continue;
    const eol = s.startsWith("\r\n", pos) ? 2 : s[pos] === "\n" || s[pos] === "\r" ? 1 : -1;
    if (eol < 0) continue;
    const dict = s.slice(Math.max(0, s.lastIndexOf("obj", at)), at);
    if (!dict.includes("/FlateDecode")) continue;
    const start = pos + eol;
    const [, num, gen] = /\/Length\s+(\d+)(?:\s+(\d+)\s+R)?/.exec(dict) ?? [];
    const length = num === undefined ? null : gen !== undefined ? indirectInteger(s, num, gen) : Number(num);
    const stop = s.indexOf("endstream", start);
    // Without a usable /Length: up to `endstream`, less the end of line before it.
    const before = stop < 0 ? bytes.length : s.startsWith("\r\n", stop - 2) ? stop - 2 : s[stop - 1] === "\n" || s[stop - 1] === "\r" ? stop - 1 : stop;
    const end = length !== null && start + length <= bytes.length ? start + length : Math.max(start, before);
    out.push({ start, end });
    pos = Math.max(pos, end);
  }
}

/** Inflates one stream's zlib data; returns the bytes it gave (or would have), at most about `limit + 1` counted. */
async function inflateStream(bytes: Uint8Array, d: StreamData, limit: number, signal: AbortSignal | undefined): Promise<number> {
  let offset = d.start;
  let last = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(c) {
      if (offset >= d.end) return c.close();
      const piece = bytes.slice(offset, Math.min(d.end, offset + FEED));
      last = piece.length;
      offset += piece.length;
      c.enqueue(piece);
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
    // Corrupt or cut data: pdf.js may still inflate what this piece held, so count its worst.
    total += last * MAX_RATIO;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return total;
}

/** Total inflated bytes of the PDF's Flate streams, stopping as soon as it passes `cap` (then it is `> cap`). */
export async function flateInflatedBytes(bytes: Uint8Array, cap: number, o: { signal?: AbortSignal; expired?: () => boolean } = {}): Promise<number> {
  let total = 0;
  for (const d of flateStreams(bytes)) {
    if (o.signal?.aborted || o.expired?.()) break;
    total += await inflateStream(bytes, d, cap - total, o.signal);
    if (total > cap) break;
  }
  return total;
}

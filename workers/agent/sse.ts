import { ProviderError } from "./errors.ts";

/** One server-sent event: `event:` name (default "message") and its joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Incremental server-sent-events parser: feed it text, it returns the events completed so
 * far. Handles events split across chunks, CRLF line ends, comments and multi-line data.
 */
export class SseParser {
  #buffer = "";
  #event = "";
  #data: string[] = [];

  push(text: string): SseEvent[] {
    this.#buffer += text;
    const out: SseEvent[] = [];
    let nl: number;
    while ((nl = this.#buffer.search(/\r\n|\n|\r/)) >= 0) {
      // A lone trailing "\r" may be the first half of "\r\n": wait for more.
      if (this.#buffer[nl] === "\r" && nl === this.#buffer.length - 1) break;
      const line = this.#buffer.slice(0, nl);
      this.#buffer = this.#buffer.slice(nl + (this.#buffer.startsWith("\r\n", nl) ? 2 : 1));
      this.#line(line, out);
    }
    return out;
  }

  /** Flushes a final event that was not followed by a blank line. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.#buffer !== "") this.#line(this.#buffer, out);
    this.#buffer = "";
    this.#line("", out);
    return out;
  }

  #line(line: string, out: SseEvent[]): void {
    if (line === "") {
      if (this.#data.length > 0) out.push({ event: this.#event || "message", data: this.#data.join("\n") });
      this.#event = "";
      this.#data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#event = value;
    else if (field === "data") this.#data.push(value);
  }
}

/** Reads a server-sent-events byte stream to its end; cancels it if the consumer stops early. */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        yield* parser.push(decoder.decode());
        yield* parser.end();
        return;
      }
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Encodes one server-sent event. */
export function formatSse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The reply text of a streamed delta's `content`, in every shape OpenAI-compatible providers
 * send it: a string, or an array of typed parts (Mistral's reasoning models) whose `text`
 * parts are joined; thinking and reasoning parts (and anything else) are not reply text.
 */
export function deltaText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content) {
    if (typeof part === "string") text += part;
    else if (typeof part === "object" && part !== null) {
      const p = part as { type?: unknown; text?: unknown };
      if ((p.type === "text" || p.type === "output_text") && typeof p.text === "string") text += p.text;
    }
  }
  return text;
}

/** `usage` of a chunk (`prompt_tokens`, `completion_tokens`), wherever it comes; undefined when absent. */
export function chunkUsage(chunk: unknown): { input: number; output: number } | undefined {
  if (typeof chunk !== "object" || chunk === null) return undefined;
  const u = (chunk as { usage?: unknown }).usage;
  if (typeof u !== "object" || u === null) return undefined;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  const { prompt_tokens, completion_tokens } = u as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return { input: n(prompt_tokens), output: n(completion_tokens) };
}

/** What {@link readChunkStream} fills: it applies each JSON chunk, and is done at `[DONE]` (or when it says so). */
export interface ChunkAccumulator {
  done: boolean;
  /** Applies one chunk; the text it added to the reply. */
  apply(chunk: unknown): string;
}

export interface ChunkStreamOptions {
  signal: AbortSignal;
  /** Called on each piece of the body (re-arms an idle timer). */
  arm: () => void;
  onText?: (text: string) => void | Promise<void>;
  /** The ProviderError message for a chunk that is not JSON. */
  malformed: string;
  /** Turns a failure of the stream itself into a ProviderError. */
  mapError?: (err: unknown) => Error;
}

/**
 * Reads a streamed chat completion (`data: {chunk}` events ending `data: [DONE]`, as
 * OpenAI-compatible providers and Workers AI send it) into `acc`. On abort the body is
 * cancelled (not every stream follows the signal) and this returns quietly: the caller
 * tells an interrupt from a timeout.
 */
export async function readChunkStream(body: ReadableStream<Uint8Array>, acc: ChunkAccumulator, o: ChunkStreamOptions): Promise<void> {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel(o.signal.reason).catch(() => undefined);
  o.signal.addEventListener("abort", onAbort, { once: true });
  if (o.signal.aborted) onAbort();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const handle = async (events: SseEvent[]) => {
    for (const ev of events) {
      if (ev.data === "[DONE]") {
        acc.done = true;
        continue;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(ev.data);
      } catch {
        throw new ProviderError("provider_bad_stream", o.malformed);
      }
      const text = acc.apply(chunk);
      if (!text) continue;
      // A provider often sends a whole short reply in one read: a reader that asks for a
      // pause (see ModelRequest.onText) gets it here, before the rest is parsed.
      const pause = o.onText?.(text);
      if (pause) await pause;
    }
  };
  try {
    while (!acc.done && !o.signal.aborted) {
      const { value, done } = await reader.read();
      if (done) {
        await handle(parser.push(decoder.decode()));
        await handle(parser.end());
        return;
      }
      o.arm();
      await handle(parser.push(decoder.decode(value, { stream: true })));
    }
  } catch (err) {
    if (o.signal.aborted) return;
    throw err instanceof ProviderError || !o.mapError ? err : o.mapError(err);
  } finally {
    o.signal.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * A fake Workers AI binding: an object with `run(model, inputs, options)`, as `env.AI` is.
 * Each call takes the next scripted reply. Streams are server-sent events, as the binding
 * sends them: `data: {...}` lines ending with `data: [DONE]`.
 */
export type AiReply =
  /** Streams these chunks, then `[DONE]`. */
  | { kind: "stream"; chunks: unknown[] }
  /** Streams `first`, then stays open until the call's signal aborts (it records that). */
  | { kind: "hold"; first: unknown[] }
  /** `run` rejects with this message, as the binding does ("3040: Capacity temporarily exceeded"). */
  | { kind: "error"; message: string };

export interface AiCall {
  model: string;
  inputs: Record<string, unknown>;
}

const encoder = new TextEncoder();
const sse = (chunk: unknown) => encoder.encode(`data: ${typeof chunk === "string" ? chunk : JSON.stringify(chunk)}\n\n`);

export class FakeAi {
  readonly calls: AiCall[] = [];
  /** Set when a held stream saw its call aborted. */
  aborted = false;
  readonly #script: AiReply[] = [];

  then(...replies: AiReply[]): this {
    this.#script.push(...replies);
    return this;
  }

  /** A stream of `{"response": piece}` chunks and a final usage chunk. */
  text(...pieces: string[]): this {
    return this.then({
      kind: "stream",
      chunks: [
        ...pieces.map((response) => ({ response })),
        { response: "", usage: { prompt_tokens: 7, completion_tokens: pieces.length, total_tokens: 7 + pieces.length } },
      ],
    });
  }

  async run(model: string, inputs: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown> {
    this.calls.push({ model, inputs: structuredClone(inputs) });
    const reply = this.#script.shift() ?? { kind: "error", message: "5007: no reply scripted for this call" };
    if (reply.kind === "error") throw new Error(reply.message);
    if (reply.kind === "stream") {
      return new ReadableStream<Uint8Array>({
        start(c) {
          for (const chunk of reply.chunks) c.enqueue(sse(chunk));
          c.enqueue(sse("[DONE]"));
          c.close();
        },
      });
    }
    const signal = options?.signal;
    return new ReadableStream<Uint8Array>({
      start: (c) => {
        for (const chunk of reply.first) c.enqueue(sse(chunk));
        signal?.addEventListener("abort", () => {
          this.aborted = true;
          c.error(signal.reason);
        });
      },
      cancel: () => {
        this.aborted = this.aborted || Boolean(signal?.aborted);
      },
    });
  }
}

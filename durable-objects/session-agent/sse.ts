import { formatSse, type TurnEvent, type TurnOutcome } from "../../workers/agent/index.ts";
import type { TurnSink } from "../../workers/runtime/index.ts";

const encoder = new TextEncoder();

/**
 * Streams a turn to an HTTP caller as server-sent events: `delta` {text}, `tool`
 * {name, status: start|end, summary?}, then `done` {finish_reason} or `error` {code, message}.
 * A caller that goes away is ignored (the turn goes on and is stored).
 */
export class SseSink implements TurnSink {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  #open = true;

  constructor(writer: WritableStreamDefaultWriter<Uint8Array>) {
    this.#writer = writer;
  }

  #send(event: string, data: unknown): void {
    if (!this.#open) return;
    this.#writer.write(encoder.encode(formatSse(event, data))).catch(() => {
      this.#open = false;
    });
  }

  event(e: TurnEvent): void {
    if (e.type === "text") this.#send("delta", { text: e.text });
    else this.#send("tool", { name: e.name, status: e.phase, ...("summary" in e && typeof e.summary === "string" ? { summary: e.summary } : {}) });
  }

  end(o: TurnOutcome): void {
    if (o.error) this.#send("error", o.error);
    else this.#send("done", { finish_reason: o.finishReason });
    this.#writer.close().catch(() => undefined);
  }
}

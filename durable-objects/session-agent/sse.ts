import { formatSse, type TurnEvent, type TurnOutcome } from "../../workers/agent/index.ts";
import { nextTask, settledWithin } from "../../workers/retry/index.ts";
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
  #paused = false;
  #markSent: () => void = () => undefined;
  readonly #sent = new Promise<void>((resolve) => (this.#markSent = resolve));

  constructor(writer: WritableStreamDefaultWriter<Uint8Array>) {
    this.#writer = writer;
  }

  #send(event: string, data: unknown): void {
    if (!this.#open) return;
    this.#writer.write(encoder.encode(formatSse(event, data))).catch(() => {
      this.#open = false;
    });
  }

  sent(): void {
    this.#markSent();
  }

  /** Resolves once the turn's model request went out or the turn ended, or after `ms`. */
  untilSent(ms: number): Promise<void> {
    return settledWithin(this.#sent, ms);
  }

  /** The first delta asks for a task: it goes out before the rest of the reply is parsed and the turn ends. */
  event(e: TurnEvent): Promise<void> | undefined {
    if (e.type !== "text") {
      this.#send("tool", { name: e.name, status: e.phase, ...("summary" in e && typeof e.summary === "string" ? { summary: e.summary } : {}) });
      return undefined;
    }
    this.#send("delta", { text: e.text });
    if (this.#paused) return undefined;
    this.#paused = true;
    return nextTask();
  }

  end(o: TurnOutcome): void {
    this.#markSent();
    if (o.error) this.#send("error", o.error);
    else this.#send("done", { finish_reason: o.finishReason });
    this.#writer.close().catch(() => undefined);
  }
}

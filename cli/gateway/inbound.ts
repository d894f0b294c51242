import { runTurn, type ChatMessage, type ChatModel, type ToolRegistry, type TurnOutcome } from "../../workers/agent/index.ts";
import { STOPPED_TEXT, TYPING_REFRESH_MS, failureText, type Clock } from "../../workers/platforms/reply.ts";
import { measure, splitText } from "../../workers/platforms/text.ts";
import type { Descriptor, GatewayFrame, InboundEvent } from "../../workers/relay/frames.ts";
import type { Outbox } from "./outbox.ts";
import { SessionQueue } from "./sessions.ts";
import type { GatewayStore } from "./store.ts";

/** Reply to `/new`. */
export const NEW_SESSION_TEXT = "Started a new session.";

/** Used when the connector sent no descriptor for a platform: the smallest common limit. */
const FALLBACK_LIMIT = 2000;

export interface InboundDeps {
  store: GatewayStore;
  model: ChatModel;
  tools?: ToolRegistry | undefined;
  /** fetch for tools. */
  fetch?: typeof fetch;
  outbox: Outbox;
  /** Sends a frame on the live socket; false when there is none. */
  send: (frame: GatewayFrame) => boolean;
  descriptor: (platform: string) => Descriptor | undefined;
  clock: Clock;
  log: (line: string) => void;
}

/** The replay dedupe key of the contract. */
export function dedupeKey(ev: InboundEvent): string {
  return `${ev.source.platform}:${ev.source.chat_id}:${ev.message_id}`;
}

function parseInbound(frame: Record<string, unknown>): { event: InboundEvent; bufferId: string } | null {
  const ev = frame.event as Partial<InboundEvent> | null | undefined;
  const src = ev?.source;
  if (typeof frame.bufferId !== "string" || !ev || typeof ev.text !== "string" || typeof ev.session_key !== "string" || ev.session_key === "") return null;
  if (ev.message_id === undefined || ev.message_id === null || !src || typeof src.platform !== "string" || src.chat_id === undefined || src.chat_id === null) return null;
  const event: InboundEvent = {
    ...(ev as InboundEvent),
    message_id: String(ev.message_id),
    source: { ...src, chat_id: String(src.chat_id), thread_id: src.thread_id === undefined || src.thread_id === null ? null : String(src.thread_id) },
  };
  return { event, bufferId: frame.bufferId };
}

/** What the user sees for a finished turn (the same rules as the edge's platform replies). */
export function replyText(outcome: TurnOutcome): string {
  if (outcome.error) return failureText(outcome);
  if (outcome.text.trim() === "") return outcome.finishReason === "interrupted" ? STOPPED_TEXT : "(no reply)";
  return outcome.text;
}

/**
 * Serves inbound frames: drops replays of handled messages, runs one turn at a time per
 * session key with the agent core over the local transcript, sends the reply split to the
 * platform's limit, and only then records the message as handled and acknowledges it.
 */
export class InboundHandler {
  readonly #d: InboundDeps;
  readonly #queue: SessionQueue;
  /** Dedupe key → bufferIds (the first delivery and any replays) awaiting its ack. */
  readonly #inFlight = new Map<string, string[]>();
  /** Stops the typing refresh of each running turn. */
  readonly #typingStops = new Set<() => void>();
  #stopping = false;
  #closed = false;

  constructor(deps: InboundDeps) {
    this.#d = deps;
    this.#queue = new SessionQueue((key, err) => deps.log(`session ${key}: ${err instanceof Error ? err.message : String(err)}`));
  }

  /** An `inbound` frame. */
  inbound(frame: Record<string, unknown>): void {
    if (this.#stopping) return; // not acked: the connector replays it to the next gateway run
    const parsed = parseInbound(frame);
    if (!parsed) {
      // Acked so one bad frame does not come back on every handshake.
      this.#d.log(`inbound ${String(frame.bufferId)}: malformed, dropped`);
      if (typeof frame.bufferId === "string") this.#d.send({ type: "inbound_ack", bufferId: frame.bufferId });
      return;
    }
    const { event, bufferId } = parsed;
    const key = dedupeKey(event);
    const waiting = this.#inFlight.get(key);
    if (waiting) return void waiting.push(bufferId);
    if (this.#d.store.isHandled(key)) return void this.#d.send({ type: "inbound_ack", bufferId });
    this.#inFlight.set(key, [bufferId]);
    const job = async (signal: AbortSignal) => {
      try {
        await this.#handle(event, signal);
      } catch (err) {
        this.#d.log(`${event.source.platform} chat ${event.source.chat_id}: ${err instanceof Error ? err.message : String(err)}`);
      }
      this.#handled(key);
    };
    void this.#queue.enqueue(event.session_key, job).then((end) => {
      if (end === "dropped") this.#inFlight.delete(key);
    });
  }

  /** Records `key` as handled, then acks every delivery of it. */
  #handled(key: string): void {
    const bufferIds = this.#inFlight.get(key) ?? [];
    this.#inFlight.delete(key);
    if (this.#closed) return;
    try {
      this.#d.store.markHandled(key);
    } catch (err) {
      this.#d.log(`could not record a message as handled: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Acks that cannot go out now are not lost: the next handshake replays the message,
    // and the dedupe acks it then.
    for (const id of bufferIds) this.#d.send({ type: "inbound_ack", bufferId: id });
  }

  /** `interrupt_inbound`: stops that session's running turn; its queued messages stay. */
  interrupt(sessionKey: string): boolean {
    return this.#queue.interrupt(sessionKey, "interrupted from the platform");
  }

  /** Stops taking messages, drops the unstarted ones and aborts the running turns; returns their keys. */
  stop(reason: string): string[] {
    this.#stopping = true;
    this.#queue.dropQueued();
    const running = this.#queue.runningKeys();
    for (const key of running) this.#queue.interrupt(key, reason);
    return running;
  }

  /** Resolves when no turn runs. */
  settled(): Promise<void> {
    return this.#queue.idle();
  }

  /** After shutdown: turns still finishing neither record nor acknowledge anything. */
  close(): void {
    this.#closed = true;
    for (const stopTyping of this.#typingStops) stopTyping();
  }

  async #handle(ev: InboundEvent, signal: AbortSignal): Promise<void> {
    const { platform, chat_id } = ev.source;
    if (ev.text.trim() === "/new") {
      this.#d.store.reset(ev.session_key);
      const sent = await this.#reply(ev, NEW_SESSION_TEXT);
      return this.#d.log(`${platform} chat ${chat_id}: new session${sent ? "" : " (reply not delivered)"}`);
    }
    const stopTyping = this.#typing(ev);
    let outcome: TurnOutcome;
    try {
      outcome = await this.#turn(ev, signal);
    } finally {
      stopTyping();
    }
    const text = replyText(outcome);
    const sent = await this.#reply(ev, text);
    const how = outcome.finishReason === "stop" ? "" : outcome.error ? `, ${outcome.error.code}` : `, ${outcome.finishReason}`;
    this.#d.log(`${platform} chat ${chat_id}: ${measure(ev.text, "codepoints")} chars in, ${measure(text, "codepoints")} chars out${how}${sent ? "" : " (reply not delivered)"}`);
  }

  async #turn(ev: InboundEvent, signal: AbortSignal): Promise<TurnOutcome> {
    const { store } = this.#d;
    const key = ev.session_key;
    try {
      const user: ChatMessage = { role: "user", content: ev.text };
      const history = [...store.transcript(key), user];
      store.append(key, user);
      return await runTurn({
        model: this.#d.model,
        ...(this.#d.tools ? { tools: this.#d.tools } : {}),
        ...(this.#d.fetch ? { fetch: this.#d.fetch } : {}),
        history,
        append: async (m) => store.append(key, m),
        signal,
      });
    } catch (err) {
      return { finishReason: "error", text: "", error: { code: "internal", message: err instanceof Error ? err.message : String(err) }, usage: { input: 0, output: 0 }, toolCalls: 0 };
    }
  }

  /** Shows typing now and every few seconds until the returned function is called. */
  #typing(ev: InboundEvent): () => void {
    const ops = this.#d.descriptor(ev.source.platform)?.supported_ops;
    if (Array.isArray(ops) && !ops.includes("typing")) return () => undefined;
    let timer: unknown = null;
    let on = true;
    const tick = () => {
      if (!on || this.#closed) return;
      this.#d.outbox.notify(ev.source.platform, { op: "typing", chat_id: ev.source.chat_id, thread_id: ev.source.thread_id });
      timer = this.#d.clock.setTimeout(tick, TYPING_REFRESH_MS);
    };
    const stop = () => {
      on = false;
      this.#typingStops.delete(stop);
      if (timer !== null) this.#d.clock.clearTimeout(timer);
    };
    this.#typingStops.add(stop);
    tick();
    return stop;
  }

  /** Sends `text` split to the platform's limit; stops at the first failed piece. True when all arrived. */
  async #reply(ev: InboundEvent, text: string): Promise<boolean> {
    const { platform, chat_id, thread_id } = ev.source;
    const d = this.#d.descriptor(platform);
    const limit = d && Number.isInteger(d.max_message_length) && d.max_message_length > 0 ? d.max_message_length : FALLBACK_LIMIT;
    const pieces = splitText(text, limit, d?.len_unit === "chars" ? "codepoints" : "utf16");
    for (const [i, content] of pieces.entries()) {
      const result = await this.#d.outbox.request(platform, { op: "send", chat_id, content, thread_id });
      if (!result.success) {
        this.#d.log(`${platform} chat ${chat_id}: reply part ${i + 1}/${pieces.length} failed${result.code ? ` (${result.code})` : ""}${result.error ? `: ${result.error}` : ""}`);
        return false;
      }
    }
    return true;
  }
}

import type { TurnEvent, TurnOutcome } from "../agent/index.ts";
import { backoffDelay, isRetryable, retryAfterMs } from "../retry/index.ts";
import { describe, type ReplyChannel } from "./channel.ts";
import type { Clock } from "./clock.ts";
import { replyText } from "./texts.ts";

/** Typing indicators last about 5 s; refresh a little sooner. */
export const TYPING_REFRESH_MS = 4_000;
/** Longest pause of live updates after a platform failure (not a 429, which says how long). */
export const MAX_LIVE_BACKOFF_MS = 30_000;

/** Longest status line of one running tool (its name and a summary of its arguments). */
const TOOL_LINE_MAX = 80;

/** `⚙ fetch_url https://example.com/page…`: what a live reply shows while a tool runs (the summary names the tool). */
export function toolLine(name: string, summary: string): string {
  const plain = `⚙ ${summary.trim() || name}`.replace(/\s+/g, " ").trim();
  const cut = plain.length > TOOL_LINE_MAX ? plain.slice(0, TOOL_LINE_MAX - 1) : plain;
  // Shown as Markdown: what a tool's arguments hold must not format (or link) anything.
  return `${cut.replace(/[\\`*_{}[\]()#+\-.!|~<>:]/g, "\\$&")}…`;
}

/** Where a turn's progress goes while it runs. */
export interface TurnSink {
  start?(): void;
  /** The turn's first model request is on its way, and the turn and its user message are stored. */
  sent?(): void;
  /** A promise returned pauses the model's stream until it settles. */
  event(e: TurnEvent): void | Promise<void>;
  end(outcome: TurnOutcome): unknown;
}

/** What a streamed reply ended with: the final text and what already shows it. */
export interface StreamEnd {
  text: string;
  ids: string[];
  /** The live updates already show exactly the final text, in full: nothing is left to deliver. */
  shown: boolean;
  /** A platform asked us to wait until then before the next call. */
  notBefore: number;
}

export interface StreamerOptions {
  clock: Clock;
  /** Whether the chat is private (platforms allow faster edits there). */
  private?: boolean;
  /** Messages a dead attempt of this turn already showed: edited, not posted again. */
  ids?: readonly string[];
  /** The reply's idempotency key (`replyKey` in channel.ts), given to the channel with every showing. */
  key?: string;
  /** Called whenever the set of messages showing the reply changes (persist it). */
  onShown?: (ids: readonly string[]) => void;
  log: (line: string) => void;
}

/**
 * Streams one turn's reply into a chat through a {@link ReplyChannel}: typing while the turn
 * runs, the first text posted and later text edited in no more often than the channel
 * allows (a channel that cannot edit gets the completed paragraphs instead, as they come), backing off when the platform fails (a 429's `retry_after` is honoured; a
 * refusal such as 401/403 stops live updates instead of repeating them per token). `end`
 * returns the final text for the durable delivery that follows.
 */
export class ReplyStreamer implements TurnSink {
  readonly #ch: ReplyChannel;
  readonly #o: StreamerOptions;
  #text = "";
  #shown = "";
  #complete = false;
  #ids: string[];
  #lastShow = 0;
  #notBefore = 0;
  #failures = 0;
  #liveOff = false;
  #logged = new Set<string>();
  #timer: unknown = null;
  #typingTimer: unknown = null;
  #chain: Promise<void> = Promise.resolve();
  #ended = false;
  /** Tool calls running now, by call id: their status lines. */
  #tools = new Map<string, string>();

  constructor(channel: ReplyChannel, opts: StreamerOptions) {
    this.#ch = channel;
    this.#o = opts;
    this.#ids = [...(opts.ids ?? [])];
  }

  /** The text streamed so far. */
  get text(): string {
    return this.#text;
  }

  start(): void {
    if (!this.#ch.caps.typing) return;
    const tick = () => {
      if (this.#ended) return;
      this.#ch.typing().catch((err: unknown) => this.#note("typing", err));
      this.#typingTimer = this.#o.clock.setTimeout(tick, TYPING_REFRESH_MS);
    };
    tick();
  }

  event(e: TurnEvent): void {
    if (this.#ended) return;
    if (e.type === "text") this.#text += e.text;
    else if (e.type === "tool" && e.phase === "start") this.#tools.set(e.id, toolLine(e.name, e.summary));
    else if (e.type === "tool") this.#tools.delete(e.id);
    else return;
    this.#schedule();
  }

  /** What a live update shows: the text so far, and a status line while a tool runs. */
  #display(): string {
    const running = [...this.#tools.values()];
    if (running.length === 0) return this.#text;
    const status = `_${running.join(" · ")}_`;
    return this.#text.trim() === "" ? status : `${this.#text.trimEnd()}\n\n${status}`;
  }

  /**
   * What a channel that cannot edit shows while the reply streams: the paragraphs that are
   * complete (up to the last blank line outside a code block), posted once and never
   * changed; the rest follows with the final delivery. Tool status lines are not posted.
   */
  #settled(): string {
    let cut = -1;
    let fences = 0;
    for (const m of this.#text.matchAll(/```|\n\n/g)) {
      if (m[0] === "```") fences++;
      else if (fences % 2 === 0) cut = m.index;
    }
    return cut < 0 ? "" : this.#text.slice(0, cut);
  }

  #schedule(): void {
    if (this.#timer !== null || this.#liveOff) return;
    if (!this.#ch.caps.edits && this.#settled().length <= this.#shown.length) return;
    const due = this.#ids.length === 0 ? this.#notBefore : Math.max(this.#lastShow + this.#ch.caps.editIntervalMs, this.#notBefore);
    const wait = due - this.#o.clock.now();
    const run = () => {
      this.#timer = null;
      this.#chain = this.#chain.then(() => this.#live());
    };
    // Due now (the first text, usually): no timer hop.
    if (wait <= 0) {
      this.#timer = "now";
      queueMicrotask(run);
      return;
    }
    this.#timer = this.#o.clock.setTimeout(run, wait);
  }

  async #live(): Promise<void> {
    const edits = this.#ch.caps.edits;
    const text = edits ? this.#display() : this.#settled();
    if (this.#ended || this.#liveOff || text.trim() === "" || text === this.#shown) return;
    try {
      const shown = await this.#ch.show(text, this.#ids, "live", this.#o.key);
      this.#setIds(shown.ids);
      this.#shown = text;
      // Without edits the rest of the reply is always still to come.
      this.#complete = edits && shown.complete;
      this.#lastShow = this.#o.clock.now();
      this.#failures = 0;
    } catch (err) {
      this.#note("live update", err);
      if (!isRetryable(err)) {
        this.#liveOff = true;
        return;
      }
      this.#failures++;
      // The first pause is up to two edit intervals, doubling per failure in a row.
      const policy = { baseMs: 2 * this.#ch.caps.editIntervalMs, capMs: MAX_LIVE_BACKOFF_MS, jitter: "equal" } as const;
      const wait = retryAfterMs(err) ?? backoffDelay(this.#failures - 1, policy);
      this.#notBefore = this.#o.clock.now() + wait;
    }
    if ((edits ? this.#display() : this.#settled()) !== this.#shown && !this.#ended) this.#schedule();
  }

  #setIds(ids: string[]): void {
    const changed = ids.length !== this.#ids.length || ids.some((id, i) => id !== this.#ids[i]);
    this.#ids = ids;
    if (changed) this.#o.onShown?.(ids);
  }

  /** One log line per kind of failure per reply: a dead platform does not flood the log. */
  #note(what: string, err: unknown): void {
    const line = `reply ${what} failed (${describe(err)})`;
    if (this.#logged.has(line)) return;
    this.#logged.add(line);
    this.#o.log(line);
  }

  /** Stops the live updates and typing; resolves with the final text once no update is in flight. */
  async end(outcome: TurnOutcome): Promise<StreamEnd> {
    this.#ended = true;
    if (this.#timer !== null && this.#timer !== "now") this.#o.clock.clearTimeout(this.#timer);
    if (this.#typingTimer !== null) this.#o.clock.clearTimeout(this.#typingTimer);
    this.#timer = null;
    await this.#chain;
    const text = replyText(outcome, this.#text);
    return { text, ids: [...this.#ids], notBefore: this.#notBefore, shown: this.#complete && text === this.#shown };
  }
}

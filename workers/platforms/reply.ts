import type { TurnEvent, TurnOutcome } from "../agent/index.ts";
import { splitText } from "./text.ts";
import { PlatformApiError, type PlatformAdapter, type ReplyTarget } from "./types.ts";

/** Timers, injectable so tests control time. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as Parameters<typeof clearTimeout>[0]),
};

/** Typing indicators last about 5 s; refresh a little sooner. */
export const TYPING_REFRESH_MS = 4_000;

/** Text shown for a turn that ended with nothing to show. */
export const STOPPED_TEXT = "⏹ Stopped.";

/** What the user sees when a turn fails. */
export function failureText(outcome: TurnOutcome): string {
  const why = outcome.error?.message ?? "something went wrong";
  return outcome.text ? `${outcome.text}\n\n⚠️ ${why}` : `⚠️ ${why}`;
}

/**
 * Streams one turn's reply into a chat: the first text is sent, later text edits that
 * message no more often than the platform allows, and the final text is split to the
 * platform's limit. Typing is shown while the turn runs and stops with it.
 */
export class PlatformReply {
  readonly #adapter: PlatformAdapter;
  readonly #target: ReplyTarget;
  readonly #clock: Clock;
  readonly #interval: number;
  #text = "";
  #shown = "";
  #messageId: string | null = null;
  #lastEdit = 0;
  /** No live update before this time (a 429 pushes it back). */
  #notBefore = 0;
  #timer: unknown = null;
  #typingTimer: unknown = null;
  #chain: Promise<void> = Promise.resolve();
  #ended = false;
  /** Ids of every message the reply produced, in order. */
  readonly messageIds: string[] = [];

  constructor(adapter: PlatformAdapter, target: ReplyTarget, clock: Clock = realClock) {
    this.#adapter = adapter;
    this.#target = target;
    this.#clock = clock;
    this.#interval = target.isPrivate ? adapter.capabilities.editIntervalMs.private : adapter.capabilities.editIntervalMs.group;
  }

  /** Starts the typing indicator (refreshed until the turn ends). */
  start(): void {
    if (!this.#adapter.capabilities.typing || !this.#adapter.typing) return;
    const tick = () => {
      if (this.#ended) return;
      this.#adapter.typing!(this.#target).catch(() => undefined);
      this.#typingTimer = this.#clock.setTimeout(tick, TYPING_REFRESH_MS);
    };
    tick();
  }

  event(e: TurnEvent): void {
    if (e.type !== "text" || this.#ended) return;
    this.#text += e.text;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer !== null || !this.#adapter.capabilities.edits) return;
    const due = this.#messageId === null ? this.#notBefore : Math.max(this.#lastEdit + this.#interval, this.#notBefore);
    const wait = Math.max(0, due - this.#clock.now());
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = null;
      this.#enqueue(() => this.#live());
    }, wait);
  }

  #enqueue(step: () => Promise<void>): Promise<void> {
    this.#chain = this.#chain.then(step).catch((err: unknown) => this.#noteFailure(err));
    return this.#chain;
  }

  #noteFailure(err: unknown): void {
    if (err instanceof PlatformApiError && err.retryAfter !== undefined) {
      this.#notBefore = this.#clock.now() + err.retryAfter * 1000;
    }
    console.warn(`${this.#adapter.name}: reply update failed`, err instanceof Error ? err.message : String(err));
  }

  /** One live update: the first piece of the text so far. */
  async #live(): Promise<void> {
    if (this.#ended) return;
    const [head = ""] = splitText(this.#text, this.#adapter.capabilities.maxMessageLength, this.#adapter.capabilities.lengthUnit);
    if (head.trim() === "" || head === this.#shown) return;
    await this.#show(head);
    if (this.#text !== this.#shown && !this.#ended) this.#schedule();
  }

  async #show(text: string): Promise<void> {
    if (this.#messageId === null) {
      const sent = await this.#adapter.send(this.#target, text, 0);
      this.#messageId = sent.messageId;
      this.messageIds.push(sent.messageId);
    } else {
      await this.#adapter.edit(this.#target, this.#messageId, text);
    }
    this.#shown = text;
    this.#lastEdit = this.#clock.now();
  }

  /** Delivers the final text: the shown message gets the first piece, the rest are new messages. */
  async end(outcome: TurnOutcome): Promise<void> {
    this.#ended = true;
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    if (this.#typingTimer !== null) this.#clock.clearTimeout(this.#typingTimer);
    this.#timer = null;
    const text = outcome.error ? failureText({ ...outcome, text: this.#text || outcome.text }) : this.#text.trim() === "" ? (outcome.finishReason === "interrupted" ? STOPPED_TEXT : "(no reply)") : this.#text;
    const pieces = splitText(text, this.#adapter.capabilities.maxMessageLength, this.#adapter.capabilities.lengthUnit);
    // Unlike live updates, a failed final delivery is the caller's to know about.
    const final = this.#chain.then(async () => {
      // A 429 during the live updates still holds for the final text.
      const hold = this.#notBefore - this.#clock.now();
      if (hold > 0) await new Promise((r) => this.#clock.setTimeout(() => r(undefined), hold));
      const [first = "", ...rest] = pieces;
      if (first !== this.#shown) await this.#retryOnce(() => this.#show(first));
      for (const [i, piece] of rest.entries()) {
        const sent = await this.#retryOnce(() => this.#adapter.send(this.#target, piece, i + 1));
        this.messageIds.push(sent.messageId);
      }
    });
    this.#chain = final.catch(() => undefined);
    await final;
  }

  async #retryOnce<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const wait = err instanceof PlatformApiError && err.retryAfter !== undefined ? Math.min(err.retryAfter, 30) * 1000 : 500;
      await new Promise((r) => this.#clock.setTimeout(() => r(undefined), wait));
      return fn();
    }
  }
}

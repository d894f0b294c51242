import type { GatewayFrameIn, InboundEvent } from "../../workers/relay/frames.ts";
import { budgetText, UsageStore, utcDay } from "../../workers/runtime/index.ts";
import { relayChannel } from "./channel.ts";
import { frameAttachments } from "./media.ts";
import { relayedTarget, type GatewaySessions } from "./sessions.ts";
import type { GatewayStore } from "./store.ts";
import type { Outbox } from "./outbox.ts";
import type { Descriptor } from "../../workers/relay/frames.ts";

/** Reply to `/new`. */
export const NEW_SESSION_TEXT = "Started a new session.";

/** The replay dedupe key of the contract. */
export function dedupeKey(ev: InboundEvent): string {
  return `${ev.source.platform}:${ev.source.chat_id}:${ev.message_id}`;
}

export interface InboundDeps {
  store: GatewayStore;
  sessions: GatewaySessions;
  outbox: Outbox;
  descriptor: (platform: string) => Descriptor | undefined;
  /** Sends a frame on the live socket; false when there is none. */
  send: (frame: GatewayFrameIn) => boolean;
  log: (line: string, err?: unknown) => void;
  /** Now, in ms (the gateway's clock). */
  now: () => number;
}

/**
 * Serves inbound frames: each message goes into its session's durable queue (a replay of
 * one already taken in is a no-op) and is acknowledged as soon as it is stored, so the
 * connector may forget it: from then on the gateway's own storage keeps it, across
 * restarts, until its reply is delivered. The turn runs in the shared runtime.
 */
export class InboundHandler {
  readonly #d: InboundDeps;
  #stopping = false;

  constructor(deps: InboundDeps) {
    this.#d = deps;
  }

  /** An `inbound` frame (already checked against its schema). */
  inbound(frame: { event: InboundEvent; bufferId: string }): void {
    if (this.#stopping) return; // not acked: the connector replays it to the next run
    const { event: ev, bufferId } = frame;
    const key = dedupeKey(ev);
    const chat = {
      platform: ev.source.platform,
      chatId: ev.source.chat_id,
      threadId: ev.source.thread_id,
      target: ev.target ?? null,
      private: ev.source.chat_type === "dm",
    };
    try {
      if (ev.text.trim() === "/new") this.#newSession(ev, key, chat);
      else if (this.#overBudget(ev, key, chat)) {
        // Answered (at most once a day per chat) and remembered: a replay is no turn either.
      } else {
        const attachments = frameAttachments(ev.media_urls, ev.media);
        this.#d.sessions.forKey(ev.session_key).enqueue({
          content: ev.text,
          origin: "platform",
          target: relayedTarget(chat),
          deliveryKey: key,
          meta: { userKey: `${ev.source.platform}:${ev.source.user_id}`, ...(attachments.length > 0 ? { attachments } : {}) },
        });
      }
    } catch (err) {
      // Not stored, so not acked: the connector keeps it and replays it.
      this.#d.log(`inbound ${bufferId}: could not be stored`, err);
      return;
    }
    this.#d.send({ type: "inbound_ack", bufferId });
  }

  /**
   * The Worker's `DAILY_TOKEN_BUDGET` (in the descriptor), kept here as at the edge: a
   * platform user over today's tokens (counted in this gateway's own usage table, where its
   * turns are recorded) gets no turn, and the chat is told once a day when it resets.
   */
  #overBudget(ev: InboundEvent, key: string, chat: Parameters<typeof relayChannel>[1]): boolean {
    const descriptor = this.#d.descriptor(chat.platform);
    const budget = descriptor?.daily_token_budget ?? null;
    if (budget === null) return false;
    const now = this.#d.now();
    const day = utcDay(now);
    const used = UsageStore.usedOn(this.#d.store.sql, `${ev.source.platform}:${ev.source.user_id}`, day);
    if (used < budget) return false;
    const queue = this.#d.sessions.forKey(ev.session_key).queue;
    if (queue.seen(key)) return true;
    queue.remember(key, now);
    if (this.#d.store.tellBudgetOnce(`${chat.platform}:${chat.chatId}:${chat.threadId ?? ""}`, day)) {
      void relayChannel(this.#d.outbox, chat, descriptor)
        .post(budgetText(used, budget, now))
        .catch((err: unknown) => this.#d.log(`${chat.platform} chat ${chat.chatId}: budget notice not delivered`, err));
    }
    return true;
  }

  #newSession(ev: InboundEvent, key: string, chat: Parameters<typeof relayChannel>[1]): void {
    const queue = this.#d.sessions.forKey(ev.session_key).queue;
    if (queue.seen(key)) return;
    this.#d.store.reset(ev.session_key);
    queue.remember(key, Date.now());
    void relayChannel(this.#d.outbox, chat, this.#d.descriptor(chat.platform))
      .post(NEW_SESSION_TEXT)
      .catch((err: unknown) => this.#d.log(`${chat.platform} chat ${chat.chatId}: /new answer not delivered`, err));
  }

  /** `interrupt_inbound` (a /stop on the platform): stops that session's turn and drops what waits behind it. */
  interrupt(sessionKey: string): boolean {
    return this.#d.sessions.forKey(sessionKey).interrupt({ dropQueued: true }).interrupted;
  }

  /** Stops taking messages (unstored ones are replayed to the next run) and interrupts the running turns; returns their keys. */
  stop(): string[] {
    this.#stopping = true;
    return this.#d.sessions.interruptAll();
  }
}

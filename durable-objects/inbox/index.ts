import { DurableObject } from "cloudflare:workers";
import { runCommand } from "../../workers/conversations/commands.ts";
import { seedFor } from "../../workers/conversations/sessions.ts";
import { sessionAgent } from "../../workers/conversations/stubs.ts";
import { unknownCommandText } from "../../workers/conversations/texts.ts";
import { db } from "../../workers/db/client.ts";
import { newSessionId } from "../../workers/db/ids.ts";
import { routeDelete, routeUpsert } from "../../workers/db/mirror.ts";
import { logger } from "../../workers/log/index.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import type { MessageEvent, PlatformEvent, SessionSource } from "../../workers/platforms/types.ts";
import { budgetText } from "../../workers/runtime/texts.ts";
import { usedToday } from "../../workers/db/usage.ts";
import { backoffDelay, isOverloaded, type BackoffPolicy } from "../../workers/retry/index.ts";
import { durableSql, IdleWaiters, utcDay } from "../../workers/runtime/index.ts";
import { settings } from "../../workers/settings.ts";
import { nameless, objectName } from "../name.ts";
import { ALBUM_MAX, ALBUM_WAIT_MS, joinAlbum } from "./album.ts";
import { InboxStore, type Binding } from "./store.ts";

/** At most one refusal per chat per this long. */
export const REFUSAL_INTERVAL_MS = 10 * 60 * 1000;
/** The outbox is looked at again this soon if a hand-on failed (or the object died mid-way). */
const RETRY_MS = 2_000;
const MAX_RETRY_MS = 60_000;
/** A failed hand-on is tried again after 4 s, 8 s … up to a minute, jittered so Inboxes that failed together spread out. */
const HAND_ON_BACKOFF: BackoffPolicy = { baseMs: 2 * RETRY_MS, capMs: MAX_RETRY_MS, jitter: "equal" };

export type TakeResult = "accepted" | "duplicate" | "ignored";

/**
 * One per session key (a DM, a thread, a user in a group): takes platform deliveries in
 * exactly once and in order, and owns which session the key is bound to. A webhook is
 * acknowledged as soon as the delivery is in this object's storage (one round trip); the
 * delivery then goes on from its ordered outbox (a turn to the session's object, or a chat
 * command run here), and the binding is copied to D1 behind it.
 */
export class Inbox extends DurableObject<Env> {
  readonly #store: InboxStore;
  #draining: Promise<void> | null = null;
  #again = false;
  readonly #idle = new IdleWaiters(() => this.#isIdle());
  /** The alarm rang: the album at the head goes on without waiting longer. */
  #albumsDue = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = new InboxStore(durableSql(ctx.storage));
    // Kept once, for an instance the runtime starts without its name (durable-objects/name.ts).
    if (ctx.id.name !== undefined && this.#store.meta("key") !== ctx.id.name) this.#store.setMeta("key", ctx.id.name);
  }

  /** The session key this object is named by (durable-objects/name.ts). */
  get #key(): string {
    const key = objectName(this.ctx, () => this.#store.meta("key"));
    if (key === null) throw nameless("Inbox");
    return key;
  }

  /**
   * Takes in a delivery: a redelivery is a duplicate; a message not for the bot is ignored
   * unless this key's thread is bound (it then hears every message); anything else is
   * stored in the outbox and handed on after this returns.
   */
  async take(event: PlatformEvent): Promise<TakeResult> {
    const now = Date.now();
    // No name and none kept: a key over the runtime's name limit (1024 bytes) gives no ctx.id.name. The intake named this
    // Inbox by its event's key, so that is the key to keep.
    if (objectName(this.ctx, () => this.#store.meta("key")) === null) this.#store.setMeta("key", buildSessionKey(event.source));
    const binding = this.#store.binding();
    // Not for the bot: ignored, unless this thread hears everything, or it is part of an
    // album (kept for its wait: if no part of it was for the bot, it is dropped then).
    const albumPart = event.kind === "message" && event.album !== undefined;
    if (event.addressed === false && !binding?.bound && !albumPart) return "ignored";
    const deliveryKey = `${event.source.platform}:${event.deliveryId}`;
    if (!this.#store.firstTime(deliveryKey, now)) return "duplicate";
    this.#store.push(deliveryKey, event, now);
    // When the user here last wrote: a platform may let the bot write first only for a while after (WhatsApp: 24 h).
    this.#store.setMeta("last_inbound_at", String(now));
    await this.#armAlarm(now + (event.kind === "message" && event.album ? ALBUM_WAIT_MS : RETRY_MS));
    void this.#drain();
    return "accepted";
  }

  /** When this key last took in a delivery (epoch ms), or null. */
  async lastInbound(): Promise<number | null> {
    const at = Number(this.#store.meta("last_inbound_at") ?? NaN);
    return Number.isFinite(at) ? at : null;
  }

  /** The session this key is bound to, if any. */
  async session(): Promise<string | null> {
    return this.#store.binding()?.sessionId ?? null;
  }

  /**
   * Binds this key to a session on purpose (/resume, /new, a handoff): the session that
   * held it before (if another) ends with reason `session_switch`. Returns that session.
   */
  async bind(input: { sessionId: string; origin: Binding["origin"]; bound: boolean }): Promise<string | null> {
    const key = this.#key;
    const previous = this.#store.binding()?.sessionId ?? null;
    this.#store.setBinding({ sessionId: input.sessionId, bound: input.bound, origin: input.origin, updatedAt: Date.now() });
    await Promise.all([
      sessionAgent(this.env, input.sessionId).keyed(key),
      previous && previous !== input.sessionId ? sessionAgent(this.env, previous).ended("session_switch") : null,
    ]);
    await this.#syncRoute();
    return previous;
  }

  /** Unbinds this key, if it is still bound to `sessionId` (an abandoned handoff). */
  async unbind(sessionId: string): Promise<boolean> {
    const b = this.#store.binding();
    if (!b || b.sessionId !== sessionId) return false;
    this.#store.clearBinding();
    await routeDelete(db(this.env), this.#key, sessionId).run();
    return true;
  }

  /**
   * Gives the key back to `sessionId` after a handoff that had unbound it died: only when
   * nothing took the key meanwhile (a message there since starts its own session).
   */
  async restore(input: { sessionId: string; origin: Binding["origin"]; bound: boolean }): Promise<boolean> {
    if (this.#store.binding()) return false;
    this.#store.setBinding({ sessionId: input.sessionId, bound: input.bound, origin: input.origin, updatedAt: Date.now() });
    await this.#syncRoute();
    return true;
  }

  /** True the first time this object sees a delivery (an answer that needs no session, given once). */
  async firstSight(deliveryKey: string): Promise<boolean> {
    return this.#store.firstTime(deliveryKey, Date.now());
  }

  /** Whether this object saw a delivery (recorded by {@link firstSight}), recording nothing. */
  async seen(deliveryKey: string): Promise<boolean> {
    return this.#store.seen(deliveryKey);
  }

  /** True at most once per {@link REFUSAL_INTERVAL_MS} (this object is a chat's refusal limiter). */
  async claimRefusal(): Promise<boolean> {
    const now = Date.now();
    const last = Number(this.#store.meta("refused_at") ?? 0);
    if (now - last < REFUSAL_INTERVAL_MS) return false;
    this.#store.setMeta("refused_at", String(now));
    return true;
  }

  /** Resolves once the outbox is empty and D1 has the binding. */
  async idle(): Promise<void> {
    if (this.#idle.idle) return;
    void this.#drain();
    await this.#idle.wait();
  }

  #isIdle(): boolean {
    const b = this.#store.binding();
    return this.#draining === null && this.#store.pending() === 0 && (!b || b.synced);
  }

  override async alarm(): Promise<void> {
    // The alarm set for an album's wait (or any later one): whatever of it arrived goes on.
    this.#albumsDue = true;
    await this.#drain();
  }

  async #armAlarm(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  #drain(): Promise<void> {
    if (this.#draining) {
      this.#again = true;
      return this.#draining;
    }
    this.#draining = this.#run().finally(() => {
      this.#draining = null;
      if (this.#again) {
        this.#again = false;
        void this.#drain();
      } else this.#idle.check();
    });
    return this.#draining;
  }

  async #run(): Promise<void> {
    // The alarm releases the album it was set for (the one at the head); a later album
    // waits its own time.
    let albumsDue = this.#albumsDue;
    this.#albumsDue = false;
    for (let item = this.#store.first(); item; item = this.#store.first()) {
      // An album's first part waits for the others (what follows it in this chat waits too, in order).
      const album = item.event.kind === "message" && item.event.album ? joinAlbum(this.#store.head(ALBUM_MAX)) : null;
      if (album && !albumsDue && Date.now() < item.createdAt + ALBUM_WAIT_MS) {
        await this.#armAlarm(item.createdAt + ALBUM_WAIT_MS);
        return;
      }
      try {
        await this.#handOn(item.deliveryKey, album ? album.event : item.event);
        for (const seq of album ? album.seqs : [item.seq]) this.#store.done(seq);
        if (album) albumsDue = false;
      } catch (err) {
        const attempts = this.#store.failed(item.seq);
        // The delivery stays in the outbox whatever failed; an overloaded session object gets the longest pause, not more load.
        const wait = isOverloaded(err) ? MAX_RETRY_MS : backoffDelay(attempts - 1, HAND_ON_BACKOFF);
        logger
          .child(`inbox ${this.#key}`)
          .error(`handing on failed; retrying in ${Math.round(wait / 1000)} s`, { delivery: item.deliveryKey, attempt: attempts, err });
        await this.#armAlarm(Date.now() + wait);
        return;
      }
    }
    const synced = await this.#syncRoute().then(
      () => true,
      async (err: unknown) => {
        logger.child(`inbox ${this.#key}`).error("could not copy the binding to D1; retrying", { err });
        await this.#armAlarm(Date.now() + RETRY_MS);
        return false;
      },
    );
    // All handed on and copied: the alarm each take set (a retry, in case this instance died) would only wake an idle Inbox.
    if (synced && this.#store.pending() === 0) await this.ctx.storage.deleteAlarm();
  }

  async #syncRoute(): Promise<void> {
    const b = this.#store.binding();
    if (!b || b.synced) return;
    await routeUpsert(db(this.env), { sessionKey: this.#key, sessionId: b.sessionId, origin: b.origin, bound: b.bound, updatedAt: b.updatedAt }).run();
    this.#store.markSynced(b.updatedAt);
  }

  /**
   * Hands one delivery on: a message to its session's object, a command run here. An
   * unknown command reaches this only where it was for this bot (a DM, or `/x@thisbot`):
   * it is told so; other bots' commands were dropped by the adapter.
   */
  async #handOn(deliveryKey: string, event: PlatformEvent): Promise<void> {
    const adapter = adapterFor(this.env, event.source.platform);
    if (!adapter) return; // the platform was switched off since: nothing can answer
    if (typeof event.addressed === "object" && !(await adapter.addressedBy?.(event.addressed.mentions))) return;
    // An album none of whose parts was for the bot (outside a thread that hears everything).
    if (event.addressed === false && !this.#store.binding()?.bound) return;
    if (event.kind === "message") return this.#message(deliveryKey, event);
    const answer =
      event.kind === "command"
        ? await runCommand({
            env: this.env,
            key: this.#key,
            event,
            adapter,
            current: () => this.#store.binding()?.sessionId ?? null,
            bind: (sessionId) => this.bind({ sessionId, origin: event.source, bound: true }),
          })
        : unknownCommandText(adapter.commands, event.name);
    await adapter.show(event.target, answer, [], "final").catch((err: unknown) => logger.child(adapter.name).warn("could not answer a command", { err }));
  }

  async #message(deliveryKey: string, event: MessageEvent): Promise<void> {
    if (await this.#overBudget(event)) return;
    for (let fresh = false; ; fresh = true) {
      let binding = this.#store.binding();
      const seed = binding && !fresh ? undefined : seedFor(this.env, event.source, this.#key);
      if (!binding || fresh) {
        binding = this.#newBinding(event.source, event.bindsThread);
      }
      const res = await sessionAgent(this.env, binding.sessionId).enqueue({
        content: event.text,
        target: event.target,
        deliveryKey,
        ...(seed ? { seed } : {}),
        meta: { userKey: `${event.source.platform}:${event.source.userId}`, ...(event.attachments.length > 0 ? { attachments: event.attachments } : {}) },
      });
      // A session that no longer exists (deleted): the key starts a fresh one.
      if (res.ok || fresh) return;
    }
  }

  /**
   * `DAILY_TOKEN_BUDGET`: a platform user over today's tokens gets no turn, and one clear
   * message (per chat, per UTC day) saying when it resets.
   */
  async #overBudget(event: MessageEvent): Promise<boolean> {
    const budget = settings(this.env).dailyTokenBudget;
    if (budget === null) return false;
    const now = Date.now();
    const day = utcDay(now);
    const used = await usedToday(this.env.DB, `${event.source.platform}:${event.source.userId}`, day);
    if (used < budget) return false;
    const toldKey = `budget_told:${event.source.userId}`;
    if (this.#store.meta(toldKey) !== day) {
      this.#store.setMeta(toldKey, day);
      const adapter = adapterFor(this.env, event.source.platform);
      await adapter
        ?.show(event.target, budgetText(used, budget, now), [], "final")
        .catch((err: unknown) => logger.child("inbox").warn("could not say the budget is used up", { err }));
    }
    return true;
  }

  #newBinding(source: SessionSource, bound: boolean): Binding {
    const b = { sessionId: newSessionId(Date.now()), bound, origin: source, updatedAt: Date.now() };
    this.#store.setBinding(b);
    return { ...b, synced: false };
  }
}

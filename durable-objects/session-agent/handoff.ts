import { handoffFailedText, handoffNotice, movedText, parkedText } from "../../workers/conversations/handoff-texts.ts";
import { homeChannel, homeRefusal } from "../../workers/conversations/home.ts";
import { inbox } from "../../workers/conversations/stubs.ts";
import { describeHandoffDestination, isPlatformName, PLATFORM_LABEL } from "../../workers/platforms/names.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import { MissingRowError, type SessionRuntime } from "../../workers/runtime/index.ts";
import { settledWithin } from "../../workers/retry/index.ts";
import { handoffJson, type HandoffJson } from "../../workers/db/json.ts";
import {
  claim,
  CLI_DESTINATION,
  complete,
  fail,
  request,
  STALE_HANDOFF_ERROR,
  type HandoffDestination,
  type HandoffOrigin,
  type HandoffRequest,
} from "./handoff-state.ts";
import { HandoffFailure, placeFor } from "./handoff-place.ts";
import type { SessionRecord } from "./record.ts";
import { errorMessage } from "../../workers/log/index.ts";

/** What the runner needs from its session object. */
export interface HandoffHost {
  readonly env: Env;
  readonly runtime: SessionRuntime;
  now(): number;
  record(): SessionRecord | null;
  /** Applies a change to the session row (and tells waiters and the D1 mirror). */
  update(patch: Partial<SessionRecord>): SessionRecord | null;
  log(line: string, err?: unknown): void;
}

/**
 * Carries out this session's handoff, in the session's own object (SPEC section 4): claims
 * it, finds the destination (the requested chat or the home channel), opens a fresh thread
 * there when it can, binds the key a real message there will have to this session, runs the
 * notice turn whose reply goes there, and completes. One runner per object, so a handoff is
 * never carried out twice; one left by a dead instance is failed and undone instead.
 */
export class HandoffRunner {
  readonly #h: HandoffHost;
  #running: Promise<void> | null = null;

  constructor(host: HandoffHost) {
    this.#h = host;
  }

  /** The session's record: handoffs run only in a session that has one. */
  #record(): SessionRecord {
    const rec = this.#h.record();
    if (!rec) throw new MissingRowError("this session has no record: it was never created");
    return rec;
  }

  get active(): boolean {
    return this.#running !== null;
  }

  /** Stores a request and claims it at once. Refused while a turn runs or waits, or one is in flight. */
  request(req: HandoffRequest): { ok: true } | { ok: false; code: "turn_in_progress" | "handoff_in_flight" } {
    const rec = this.#record();
    if (this.#h.runtime.busy) return { ok: false, code: "turn_in_progress" };
    const patch = request(rec, req, this.#h.now());
    if (!patch) return { ok: false, code: "handoff_in_flight" };
    this.#h.update(patch);
    queueMicrotask(() => this.start());
    return { ok: true };
  }

  /**
   * Where a request would go ("telegram chat -100123, thread: new topic; home set by …"), or
   * why it may not be queued at all (no home channel, or one set by a non-admin). Checked
   * before the request is stored, so a refusal leaves the session untouched.
   */
  async destinationFor(req: HandoffRequest): Promise<{ ok: true; to: string } | { ok: false; message: string }> {
    const { platform } = req;
    if (platform === CLI_DESTINATION) return { ok: true, to: "the operator's CLI (hermes-edge chat offers it)" };
    if (!isPlatformName(platform)) return { ok: false, message: `unknown platform '${platform}'` };
    if (req.dmUser) {
      const adapter = adapterFor(this.#h.env, platform);
      if (!adapter?.directTarget) return { ok: false, message: `${PLATFORM_LABEL[platform]} cannot open a private chat with a user from here` };
      return { ok: true, to: `${platform} DM of user ${req.dmUser}` };
    }
    if (req.chatId)
      return {
        ok: true,
        to: describeHandoffDestination(platform, { chat_id: req.chatId, thread_id: null, source: "request" }, { thread: req.thread, explicit: true }),
      };
    const home = await homeChannel(this.#h.env, platform);
    if (!home)
      return {
        ok: false,
        message: `${platform} has no home channel: an admin (${platform.toUpperCase()}_ADMIN_USERS) must run /sethome in the destination chat, or pass chat_id`,
      };
    const refused = homeRefusal(this.#h.env, platform, home);
    return refused ? { ok: false, message: refused } : { ok: true, to: describeHandoffDestination(platform, home, { thread: req.thread }) };
  }

  /** The CLI gave up waiting for pickup: fail the handoff, but only while it is still pending. */
  failPending(reason: string): { failed: boolean; handoff: HandoffJson } {
    const rec = this.#record();
    const patch = fail(rec, reason, this.#h.now(), ["pending"]);
    if (!patch) return { failed: false, handoff: handoffJson(rec) };
    const after = this.#h.update(patch);
    if (!after) throw new MissingRowError("the session record vanished while failing its handoff");
    return { failed: true, handoff: handoffJson(after) };
  }

  /** The handoff state once it differs from `state` (null: none requested), or after `timeoutMs`. */
  async wait(state: string | null, timeoutMs: number, changed: () => Promise<void>): Promise<HandoffJson> {
    const deadline = this.#h.now() + timeoutMs;
    for (;;) {
      const next = changed();
      const rec = this.#record();
      const left = deadline - this.#h.now();
      if ((rec.handoffState ?? null) !== state || left <= 0) return handoffJson(rec);
      await settledWithin(next, left);
    }
  }

  /** Fails a handoff claimed before `claimedBefore` (the cron's lease): undone when its runner is gone. */
  async expire(claimedBefore: number): Promise<boolean> {
    const rec = this.#h.record();
    if (!rec || rec.handoffState !== "running" || (rec.handoffClaimedAt ?? 0) >= claimedBefore) return false;
    if (await this.reclaim()) return true;
    // Hung in this instance: failed; it cannot complete now.
    const patch = fail(rec, STALE_HANDOFF_ERROR, this.#h.now(), ["running"]);
    if (patch) this.#h.update(patch);
    return patch !== null;
  }

  /** Claims a pending handoff and runs it (in the background); false when there is none. */
  start(): boolean {
    if (this.#running) return false;
    const rec = this.#h.record();
    const patch = rec && claim(rec, this.#h.now());
    if (!patch) return false;
    this.#h.update(patch);
    this.#running = this.#run().finally(() => (this.#running = null));
    return true;
  }

  async #run(): Promise<void> {
    let where = this.#record().handoffPlatform ?? "?";
    try {
      const { dest, label } = await this.#carryOut((l) => (where = l));
      const rec = this.#h.record();
      const done = rec && complete(rec, dest, this.#h.now());
      if (!done) throw new HandoffFailure("the handoff was no longer running when it finished");
      const after = this.#h.update(done);
      const origin = rec.handoffOrigin;
      if (origin && after) {
        const prefix = adapterFor(this.#h.env, origin.source.platform)?.commands.prefix ?? "/";
        const url = handoffJson(after)?.destination?.url ?? null;
        await this.#tell(origin, dest.chatId === CLI_DESTINATION ? parkedText(rec.id, prefix) : movedText(label, rec.id, url, prefix));
      }
    } catch (err) {
      const reason = err instanceof HandoffFailure ? err.message : `handoff failed: ${errorMessage(err)}`;
      this.#h.log(`handoff failed: ${reason}`);
      const rec = this.#h.record();
      const failed = rec && fail(rec, reason, this.#h.now(), ["running"]);
      if (failed) this.#h.update(failed);
      if (rec?.handoffOrigin) {
        await this.#restore(rec);
        await this.#tell(rec.handoffOrigin, handoffFailedText(where, reason));
      }
    }
  }

  /** A line in the chat the handoff was asked for in (never fails the handoff). */
  async #tell(origin: HandoffOrigin, text: string): Promise<void> {
    const adapter = adapterFor(this.#h.env, origin.source.platform);
    await adapter?.post(origin.target, text).catch((err: unknown) => this.#h.log("could not tell the chat the handoff came from", err));
  }

  /** The chat the handoff came from is unbound: its next message starts afresh (/resume brings this session back). */
  async #release(rec: SessionRecord, destKey: string | null): Promise<void> {
    const origin = rec.handoffOrigin;
    if (!origin || origin.key === destKey) return;
    this.#h.update({ handoffReleased: 1 });
    await inbox(this.#h.env, origin.key).unbind(rec.id);
  }

  /** An undone handoff gives its chat back the session, unless something took the chat meanwhile. */
  async #restore(rec: SessionRecord): Promise<void> {
    const origin = rec.handoffOrigin;
    if (!origin || !rec.handoffReleased) return;
    await inbox(this.#h.env, origin.key).restore({ sessionId: rec.id, origin: origin.source, bound: Boolean(origin.source.threadId) });
    this.#h.update({ handoffReleased: null });
  }

  async #carryOut(named: (label: string) => void): Promise<{ dest: HandoffDestination; label: string }> {
    const { env } = this.#h;
    const rec = this.#record();
    const platform = rec.handoffPlatform ?? "";
    if (platform === CLI_DESTINATION) {
      named("the operator's CLI");
      // Parked: the session waits for `hermes-edge chat`; only the chat it came from changes.
      await this.#release(rec, null);
      return { dest: { chatId: CLI_DESTINATION, threadId: null }, label: "the operator's CLI" };
    }
    if (!isPlatformName(platform)) throw new HandoffFailure(`unknown platform '${platform}'`);
    const adapter = adapterFor(env, platform);
    if (!adapter) throw new HandoffFailure(`${platform} is not configured on this Worker`);
    const title = rec.title ?? rec.id.slice(0, 8);
    const { dest, source: origin, target, label } = await placeFor(env, adapter, rec, (line, err) => this.#h.log(line, err));
    named(label);
    const key = buildSessionKey(origin);
    const gate = adapter.handoffGate ? await adapter.handoffGate(dest.chatId, title, await inbox(env, key).lastInbound()) : { ok: true as const };
    if (!gate.ok) throw new HandoffFailure(gate.reason);
    // Recorded before binding: a handoff that dies from here on is undone.
    this.#h.update({ handoffDestKey: key });
    await inbox(env, key).bind({ sessionId: rec.id, origin, bound: true });
    // The platform's own notice (a WhatsApp template) went out: the user's answer continues the session.
    if (!gate.announced) {
      const from = rec.handoffOrigin ? PLATFORM_LABEL[rec.handoffOrigin.source.platform] : "the CLI";
      const taken = this.#h.runtime.enqueue({
        content: handoffNotice(title, platform, from),
        origin: "internal",
        target,
        deliveryKey: `handoff:${rec.id}:${rec.handoffRequestedAt ?? 0}`,
      });
      if (!taken) throw new HandoffFailure("this handoff's turn already ran once");
      this.#h.update({ handoffTurnId: taken.turnId });
      const { outcome, delivery } = await this.#h.runtime.waitTurn(taken.turnId);
      if (outcome.error) throw new HandoffFailure(`the agent could not answer: ${outcome.error.message}`);
      if (delivery?.end === "failed") throw new HandoffFailure(`could not deliver to ${platform}: ${delivery.error ?? "the platform refused"}`);
    }
    await this.#release(rec, key);
    return { dest, label };
  }

  /**
   * A handoff a dead instance left running is failed (`reason`), never carried out again
   * (that could deliver twice), and undone: its notice turn is dropped (and hidden from the
   * transcript if it was stored), and the destination key is unbound again.
   */
  async reclaim(reason = STALE_HANDOFF_ERROR): Promise<boolean> {
    const rec = this.#h.record();
    if (this.#running || rec?.handoffState !== "running") return false;
    const failed = fail(rec, reason, this.#h.now(), ["running"]);
    if (failed) this.#h.update({ ...failed, handoffTurnId: null, handoffDestKey: null });
    if (rec.handoffTurnId) {
      const turn = this.#h.runtime.queue.get(rec.handoffTurnId);
      if (turn) this.#h.runtime.queue.forget(turn, this.#h.now());
      if (this.#h.runtime.transcript.deactivateTurn(rec.handoffTurnId) > 0) this.#h.runtime.forgetHistory();
    }
    if (rec.handoffDestKey) await inbox(this.#h.env, rec.handoffDestKey).unbind(rec.id);
    if (rec.handoffOrigin) {
      await this.#restore(rec);
      await this.#tell(rec.handoffOrigin, handoffFailedText(rec.handoffPlatform ?? "?", reason));
    }
    this.#h.log("reclaimed a handoff left running by a stopped instance");
    return true;
  }
}

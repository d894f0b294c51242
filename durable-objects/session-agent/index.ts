import { DurableObject } from "cloudflare:workers";
import { createModel } from "../../workers/agent/index.ts";
import type { SessionSeed } from "../../workers/conversations/sessions.ts";
import { db } from "../../workers/db/client.ts";
import { handoffJson, sessionJson, type HandoffJson, type SessionJson } from "../../workers/db/json.ts";
import { durableSql, migrateAll, SessionRuntime, type ContextKeeper, type Sql } from "../../workers/runtime/index.ts";
import { logger } from "../../workers/log/index.ts";
import { nextTask } from "../../workers/retry/index.ts";
import { settings } from "../../workers/settings.ts";
import type { SessionBudget } from "./budget.ts";
import type { HandoffRunner } from "./handoff.ts";
import {
  deleteEverywhere,
  describeTools,
  exportSession,
  importSession,
  recordFromExport,
  rekeyTakenTurns,
  retain,
  transcriptView,
  type SessionExport,
  type TranscriptView,
} from "./lifecycle.ts";
import { inFlight, type HandoffRequest } from "./handoff-state.ts";
import { importFromD1 } from "./import.ts";
import type { D1Mirror } from "./mirror.ts";
import { newRecord, RecordStore, withCounters, type SessionRecord } from "./record.ts";
import { SseSink } from "./sse.ts";
import { WakeUp } from "./wake.ts";
import { newMirror, SessionTools, wireSession } from "./wiring.ts";
import { nameless, objectName } from "../name.ts";
import { loaded, NOT_FOUND, TURN_SEND_WAIT_MS, WATCHDOG_MS } from "./types.ts";
import type { EnqueueInput, EnqueueResult, Found, HandoffAnswer, StartTurnResult } from "./types.ts";

export { type EnqueueInput, type EnqueueResult, type HandoffAnswer, type StartTurnResult } from "./types.ts";

/**
 * One per session id: the session's home, wiring capabilities each in its own file: the turn
 * runtime (queue, busy policy, replies, recovery; shared with the relay gateway), the session
 * row and its handoff state machine, the handoff runner, the SSE sink of API turns, the D1
 * mirror, the daily budget (the one D1 round trip before a platform turn, when it is set).
 */
export class SessionAgent extends DurableObject<Env> {
  readonly #sql: Sql;
  #records: RecordStore;
  #mirror: D1Mirror;
  #runtime: SessionRuntime | null = null;
  #handoff: HandoffRunner | null = null;
  #context: ContextKeeper | null = null;
  #budget: SessionBudget | null = null;
  // The parts #init makes once the session row exists: reaching one before that is a bug, said as such.
  get #rt(): SessionRuntime {
    return loaded(this.#runtime, "runtime");
  }
  get #ho(): HandoffRunner {
    return loaded(this.#handoff, "handoff runner");
  }
  get #ctx(): ContextKeeper {
    return loaded(this.#context, "context keeper");
  }
  get #bud(): SessionBudget {
    return loaded(this.#budget, "budget");
  }
  #changed = Promise.withResolvers<void>();
  readonly #wake = new WakeUp(this.ctx.storage);
  readonly #tools = new SessionTools(this.env);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = durableSql(ctx.storage);
    this.#records = new RecordStore(this.#sql, () => this.#migrate());
    this.#mirror = newMirror(this.env, this.#sql, this.#records, () => this.#runtime, this.#wake);
    ctx.blockConcurrencyWhile(async () => {
      // An object whose session was never created (or was deleted) has no storage to upgrade.
      if (this.#records.exists()) this.#migrate();
      const rec = this.#records.get();
      if (!rec) return;
      this.#init(rec.id);
      // Work a previous instance left: pick it up from the alarm, promptly.
      if (this.#rt.hasWork() || rec.handoffState === "running" || rec.handoffState === "pending" || this.#mirror.pending()) await this.#wake.by(Date.now());
    });
  }

  /** The runtime's tables and the session record's: on a new object, one script (workers/runtime/sql.ts). */
  #migrate(): void {
    migrateAll(this.#sql, [...SessionRuntime.schemas, RecordStore.schema]);
  }

  #init(sessionId: string): SessionRuntime {
    if (this.#runtime) return this.#runtime;
    const parts = wireSession({
      sessionId,
      env: this.env,
      storage: this.ctx.storage,
      sql: this.#sql,
      wake: this.#wake,
      tools: this.#tools,
      records: () => this.#records,
      mirror: () => this.#mirror,
      runtime: () => this.#rt,
      update: (patch) => this.#update(patch),
      notify: () => this.#notify(),
      rest: () => void this.#rest().catch((err: unknown) => logger.child("session").warn("could not clear the alarm", { err })),
    });
    ({ runtime: this.#runtime, handoff: this.#handoff, context: this.#context, budget: this.#budget } = parts);
    return parts.runtime;
  }

  /** This object's session id: its name (durable-objects/name.ts), else the id of the session row stored here. */
  #id(): string {
    const id = objectName(this.ctx, () => this.#records.get()?.id ?? null);
    if (id === null) throw nameless("session");
    return id;
  }

  /** The session row, imported once from D1 for a session older than this object's storage. */
  async #session(): Promise<SessionRecord | null> {
    const local = this.#records.get();
    if (local) return local;
    // Reached by a bare id with nothing stored: no name to look the session up by.
    const sessionId = this.ctx.id.name;
    if (sessionId === undefined) return null;
    const imported = await importFromD1(db(this.env), this.#sql, this.#records, sessionId);
    if (imported) this.#init(sessionId);
    return imported;
  }

  #update(patch: Partial<SessionRecord>): SessionRecord | null {
    const rec = this.#records.update(patch);
    this.#mirror.now();
    this.#notify();
    return rec;
  }

  /**
   * After a turn, once its D1 copy is done: with nothing queued, running, being delivered,
   * handed off or left to copy, the alarm goes. The watchdog set for the turn would otherwise
   * wake the object (at the edge, often a new instance) only to find nothing to do.
   */
  async #rest(): Promise<void> {
    // Work left (a queued turn, say): the end of the last of it rests, and copies what this turn left.
    if (this.#working()) return;
    await this.#mirror.flush();
    if (this.#working() || this.#mirror.pending()) return;
    await this.#wake.clear();
  }

  /** A turn runs or waits, a reply waits to be delivered, or a handoff is in flight. */
  #working(): boolean {
    const rt = this.#runtime;
    const rec = this.#records.get();
    return !rt || !rec || rt.executing || rt.hasWork() || inFlight(rec) || this.#handoff?.active === true;
  }

  #notify(): void {
    this.#changed.resolve();
    this.#changed = Promise.withResolvers<void>();
  }

  /** Watchdog and recovery: deliveries, handoffs and turns a dead instance left, and the D1 copy. */
  override async alarm(): Promise<void> {
    this.#wake.rang();
    const runtime = this.#runtime;
    if (!runtime || !this.#handoff) return;
    runtime.queue.pruneSeen(Date.now());
    await this.#handoff.reclaim();
    this.#handoff.start();
    if (runtime.executing) await this.#wake.by(Date.now() + WATCHDOG_MS);
    else await runtime.pump();
    if (this.#mirror.pending()) await this.#mirror.flush();
  }

  // ---- Sessions ----------------------------------------------------------------------

  /** Creates this session under the object's name; D1 has it when this returns. `exists`: the id is taken (the caller makes another). */
  async create(seed: SessionSeed): Promise<{ ok: true; session: SessionJson } | { ok: false; code: "exists" }> {
    if (this.#records.get()) return { ok: false, code: "exists" };
    const rec = this.#records.put(newRecord(seed, Date.now(), this.#id()));
    this.#init(rec.id);
    await this.#mirror.flush();
    return { ok: true, session: this.#json(rec) };
  }

  #json(rec: SessionRecord): SessionJson {
    return sessionJson({ ...withCounters(this.#sql, rec), activeTurnId: this.#runtime?.running ? (rec.activeTurnId ?? "running") : null });
  }

  async describe(): Promise<Found<{ session: SessionJson }>> {
    const rec = await this.#session();
    return rec ? { ok: true, session: this.#json(rec) } : NOT_FOUND;
  }

  /** PATCH /v1/sessions/:id: the title, and the session's own instructions (null clears them). */
  async update(patch: { title?: string | null; instructions?: string | null }): Promise<Found<{ session: SessionJson }>> {
    if (!(await this.#session())) return NOT_FOUND;
    const next = this.#update({
      ...(patch.title !== undefined ? { title: patch.title } : {}),
      ...(patch.instructions !== undefined ? { instructions: patch.instructions } : {}),
    });
    if (!next) return NOT_FOUND;
    await this.#mirror.flush();
    return { ok: true, session: this.#json(next) };
  }

  /** Folds the older turns into the summary now (`/compact`). */
  async compact(): Promise<Found<{ compacted: boolean; folded_messages: number }>> {
    if (!(await this.#session())) return NOT_FOUND;
    const result = await this.#ctx.compact();
    await this.#mirror.flush();
    return { ok: true, ...result };
  }

  /** What `/status` shows: the session, its context use against the budget, whether a turn runs. */
  async contextStatus(): Promise<Found<{ session: SessionJson; context: Awaited<ReturnType<ContextKeeper["status"]>> }>> {
    const rec = await this.#session();
    if (!rec) return NOT_FOUND;
    return { ok: true, session: this.#json(rec), context: await this.#ctx.status() };
  }

  /**
   * `RETENTION_DAYS`: messages older than `cutoff` are folded into the summary if they were
   * not already, then deleted here and in D1 (files too). Returns how many went.
   */
  async applyRetention(cutoff: number): Promise<Found<{ deleted: number }>> {
    const rec = await this.#session();
    if (!rec) return NOT_FOUND;
    const deleted = await retain(this.env, db(this.env), rec, this.#rt, this.#ctx, cutoff);
    await this.#mirror.flush();
    return { ok: true, deleted };
  }

  /** The `/tools` answer: what the agent can use in this session right now. */
  async toolList(): Promise<Found<{ text: string }>> {
    if (!(await this.#session())) return NOT_FOUND;
    return { ok: true, text: await describeTools(this.#tools.for(createModel(settings(this.env).model))) };
  }

  /** The whole session from its own storage (exports), with the counters and title every way out fills in. */
  async exportData(): Promise<Found<{ data: SessionExport }>> {
    const rec = await this.#session();
    return rec ? { ok: true, data: exportSession(withCounters(this.#sql, rec), this.#rt) } : NOT_FOUND;
  }

  /** Brings an exported session (of this object's id) back into this empty object (and D1); `exists` when it is here already. */
  async importData(data: SessionExport): Promise<{ ok: true } | { ok: false; code: "exists" }> {
    if (data.session.id !== this.#id()) throw new Error(`session ${data.session.id.slice(0, 40)} cannot be imported into the object of session ${this.#id()}`);
    if (this.#records.get() || (await this.#session())) return { ok: false, code: "exists" };
    data = await rekeyTakenTurns(db(this.env), data);
    const rec = this.#records.put(recordFromExport(data));
    importSession(data, this.#init(rec.id));
    await this.#mirror.flush();
    return { ok: true };
  }

  /** Deletes the session everywhere: D1, its keys' bindings, its files, and this object's storage. */
  async destroy(): Promise<Found> {
    const rec = await this.#session();
    if (!rec) return NOT_FOUND;
    this.#runtime?.interrupt({ dropQueued: true });
    await deleteEverywhere(this.env, db(this.env), rec);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // A fresh start for this instance: nothing of the session is left, in storage or memory.
    this.#runtime = null;
    this.#handoff = null;
    this.#context = null;
    this.#records = new RecordStore(this.#sql, () => this.#migrate());
    this.#mirror = newMirror(this.env, this.#sql, this.#records, () => this.#runtime, this.#wake);
    return { ok: true };
  }

  /** `GET …/messages`: the stored transcript, and what of it the summary covers (see transcriptView). */
  async messages(): Promise<Found<{ transcript: TranscriptView }>> {
    const rec = await this.#session();
    return rec ? { ok: true, transcript: transcriptView(rec, this.#rt) } : NOT_FOUND;
  }

  /** A platform reported that a message it had accepted for this session was not delivered (see `SessionRuntime.deliveryFailed`). */
  async deliveryFailed(messageRef: string, reason: string): Promise<{ recorded: boolean }> {
    if (!(await this.#session())) return { recorded: false };
    return { recorded: this.#rt.deliveryFailed(messageRef, reason) };
  }

  /** The Inbox bound a session key to this session (/resume, /new, a handoff). */
  async keyed(sessionKey: string): Promise<void> {
    if (await this.#session()) this.#update({ sessionKey, endedAt: null, endReason: null });
  }

  /** The Inbox bound this session's key to another session. */
  async ended(reason: string): Promise<void> {
    if (await this.#session()) this.#update({ endedAt: Date.now(), endReason: reason });
  }

  // ---- Turns -------------------------------------------------------------------------

  /** An API turn, streamed. Refused while a turn runs or waits, or a handoff is in flight. */
  async startTurn(content: string): Promise<StartTurnResult> {
    const rec = await this.#session();
    if (!rec) return NOT_FOUND;
    if (inFlight(rec)) return { ok: false, code: "handoff_in_flight", message: "a handoff of this session is pending or running" };
    if (this.#rt.busy) return { ok: false, code: "turn_in_progress", message: "a turn is already running in this session" };
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const sink = new SseSink(writable.getWriter());
    const started = this.#rt.start({ content, origin: "api" }, sink);
    if (!started.ok) return { ok: false, code: "turn_in_progress", message: "a turn is already running in this session" };
    // The answer goes back once the model request has left (within TURN_SEND_WAIT_MS), and
    // one task later: sent at once, the caller's response and that request contend for the
    // same thread, and the request waited (measured: about 0.5-1 ms off the first token).
    await sink.untilSent(TURN_SEND_WAIT_MS);
    await nextTask();
    return { ok: true, turnId: started.turnId, stream: readable };
  }

  /** A platform message from the session's Inbox: stored before this returns, run in order. */
  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    // A seed comes with an id its Inbox has just made: D1 cannot hold that session, so a
    // new chat's first turn does not wait for a D1 read.
    // An id its Inbox has just made that names a session here already is a collision: never joined.
    if (input.seed && this.#records.get()) return { ok: false, code: "exists" };
    let rec = input.seed ? null : await this.#session();
    if (!rec && input.seed) {
      rec = this.#records.put(newRecord(input.seed, Date.now(), this.#id()));
      this.#init(rec.id);
      // The new session's row reaches D1 with its first turn's end, or after FIRST_COPY_DELAY_MS if that turn waits or runs long.
      this.#mirror.soon();
    }
    if (!rec) return NOT_FOUND;
    const user = input.meta?.userKey;
    if (typeof user === "string" && !(await this.#bud.mayWait(this.#rt, user, input.target))) return { ok: true, accepted: false };
    const taken = this.#rt.enqueue({
      content: input.content,
      origin: "platform",
      target: input.target,
      deliveryKey: input.deliveryKey,
      meta: input.meta ?? {},
    });
    return { ok: true, accepted: taken !== null };
  }

  /** Cancels this session's running turn; `dropQueued` (the /stop command) drops what waits too. */
  async interrupt(opts: { dropQueued?: boolean } = {}): Promise<{ interrupted: boolean; dropped: number }> {
    return this.#runtime?.interrupt(opts) ?? { interrupted: false, dropped: 0 };
  }

  async status(): Promise<{ running: boolean; queued: number }> {
    return { running: this.#runtime?.running ?? false, queued: this.#runtime?.queue.all("queued").length ?? 0 };
  }

  /** Resolves once nothing runs, waits or is delivered here and D1 has the copy (tests, handoffs). */
  async idle(): Promise<void> {
    for (;;) {
      await this.#runtime?.idle();
      await this.#mirror.flush();
      if (!this.#runtime?.busy && !this.#handoff?.active && !this.#mirror.pending()) return;
      await this.#changed.promise;
    }
  }

  /** The cron's safety net (a turn running too long, a handoff left pending): runs what the alarm would; `work`: there was some. */
  async recover(): Promise<Found<{ work: boolean }>> {
    const rec = await this.#session();
    if (!rec || !this.#runtime) return NOT_FOUND;
    const work = this.#runtime.hasWork() || inFlight(rec);
    if (!work && rec.activeTurnId && !this.#runtime.running) this.#update({ activeTurnId: null, turnStartedAt: null });
    if (work) await this.alarm();
    return { ok: true, work };
  }

  // ---- Handoff (SPEC section 4): the runner holds the rules; these answer the API. ----

  async requestHandoff(req: HandoffRequest): Promise<HandoffAnswer> {
    if (!(await this.#session())) return NOT_FOUND;
    const dest = await this.#ho.destinationFor(req);
    if (!dest.ok) return { ok: false, code: req.dmUser ? "no_direct_chat" : "no_home_channel", message: dest.message };
    const answer = this.#ho.request(req);
    if (answer.ok) await this.#wake.by(Date.now() + 1_000);
    return answer.ok ? { ok: true, to: dest.to } : answer;
  }

  async handoff(): Promise<Found<{ handoff: HandoffJson }>> {
    const rec = await this.#session();
    return rec ? { ok: true, handoff: handoffJson(rec) } : NOT_FOUND;
  }

  async failPendingHandoff(reason: string): Promise<Found<{ failed: boolean; handoff: HandoffJson }>> {
    return (await this.#session()) ? { ok: true, ...this.#ho.failPending(reason) } : NOT_FOUND;
  }

  async waitHandoff(state: string | null, timeoutMs: number): Promise<Found<{ handoff: HandoffJson }>> {
    if (!(await this.#session())) return NOT_FOUND;
    return { ok: true, handoff: await this.#ho.wait(state, timeoutMs, () => this.#changed.promise) };
  }

  async expireHandoff(claimedBefore: number): Promise<Found<{ expired: boolean }>> {
    return (await this.#session()) ? { ok: true, expired: await this.#ho.expire(claimedBefore) } : NOT_FOUND;
  }
}

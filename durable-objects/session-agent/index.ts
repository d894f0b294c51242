import { DurableObject } from "cloudflare:workers";
import { createModel, toolsFor } from "../../workers/agent/index.ts";
import { edgeMcpSource, type McpToolSource } from "../../workers/agent/mcp/index.ts";
import { adapterChannel } from "../../workers/conversations/channels.ts";
import { edgeAttachments } from "../../workers/conversations/files.ts";
import type { SessionSeed } from "../../workers/conversations/sessions.ts";
import { db } from "../../workers/db/client.ts";
import { handoffJson, sessionJson, type HandoffJson, type SessionJson } from "../../workers/db/json.ts";
import { logger, logLines } from "../../workers/log/index.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { ContextKeeper, durableSql, SessionRuntime, type RuntimeHost, type Sql } from "../../workers/runtime/index.ts";
import { settings } from "../../workers/settings.ts";
import { HandoffRunner } from "./handoff.ts";
import { deleteEverywhere, describeTools, exportSession, importSession, recordFromExport, rekeyTakenTurns, retainElsewhere, transcriptView, type SessionExport, type TranscriptView } from "./lifecycle.ts";
import { inFlight, type HandoffRequest } from "./handoff-state.ts";
import { importFromD1 } from "./import.ts";
import { D1Mirror } from "./mirror.ts";
import { newRecord, RecordStore, withCounters, type SessionRecord } from "./record.ts";
import { SseSink } from "./sse.ts";
import { FIRST_COPY_DELAY_MS, MIRROR_RETRY_MS, SEEN_RETENTION_MS, WATCHDOG_MS, type EnqueueInput, type EnqueueResult, type HandoffAnswer, type StartTurnResult } from "./types.ts";

export { SEEN_RETENTION_MS, WATCHDOG_MS, type EnqueueInput, type EnqueueResult, type HandoffAnswer, type StartTurnResult } from "./types.ts";

/**
 * One per session id: the session's home. It wires capabilities, each in its own file: the
 * turn runtime (queue, busy policy, replies, recovery; shared with the relay gateway), the
 * session row and its handoff state machine, the handoff runner, the SSE sink of API
 * turns, and the D1 mirror. Everything a turn needs is in this object's own SQLite, so a
 * turn reaches the model without a database round trip; D1 gets a copy behind it.
 */
export class SessionAgent extends DurableObject<Env> {
  readonly #sql: Sql;
  #records: RecordStore;
  #mirror: D1Mirror;
  #runtime: SessionRuntime | null = null;
  #handoff: HandoffRunner | null = null;
  #context: ContextKeeper | null = null;
  #changed = Promise.withResolvers<void>();
  #copyTimer: ReturnType<typeof setTimeout> | null = null;
  #alarmAt: number | null = null;
  /** MCP_SERVERS' tools, listed and cached per object (null: none configured). */
  #mcp: McpToolSource | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = durableSql(ctx.storage);
    this.#records = new RecordStore(this.#sql, () => this.#migrate());
    this.#mirror = this.#newMirror();
    ctx.blockConcurrencyWhile(async () => {
      // An object whose session was never created (or was deleted) has no storage to upgrade.
      if (RecordStore.exists(this.#sql)) this.#migrate();
      const rec = this.#records.get();
      if (!rec) return;
      this.#init(rec.id);
      // Work a previous instance left: pick it up from the alarm, promptly.
      if (this.#runtime!.hasWork() || rec.handoffState === "running" || rec.handoffState === "pending" || this.#mirror.pending()) await this.#wakeAt(Date.now());
    });
  }

  #newMirror(): D1Mirror {
    return new D1Mirror({ db: () => db(this.env), sql: this.#sql, records: this.#records, runtime: () => this.#runtime, onFailure: (err) => this.#mirrorFailed(err) });
  }

  #migrate(): void {
    SessionRuntime.migrate(this.#sql);
    RecordStore.migrate(this.#sql);
  }

  #init(sessionId: string): SessionRuntime {
    if (this.#runtime) return this.#runtime;
    const context = new ContextKeeper({
      state: () => {
        const rec = this.#records.get();
        return rec ? { summary: rec.summary ?? null, foldedThrough: rec.foldedThrough ?? 0, instructions: rec.instructions ?? null, source: rec.source, chatType: rec.chatType } : null;
      },
      saveSummary: (summary, foldedThrough) => void this.#update({ summary, foldedThrough }),
      runtime: () => this.#runtime!,
      model: () => createModel(settings(this.env).model),
      settings: () => ({ systemPrompt: settings(this.env).systemPrompt, budget: settings(this.env).contextTokens }),
      now: () => Date.now(),
      log: logLines(logger.child(`session ${sessionId}`)),
    });
    this.#context = context;
    const host: RuntimeHost = {
      sql: this.#sql,
      session: sessionId,
      clock: { now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as number) },
      busyPolicy: () => settings(this.env).busyPolicy,
      model: () => createModel(settings(this.env).model),
      ready: () => context.ready(),
      prepare: (transcript, turn, ids) => context.prepare(transcript, turn, ids),
      foldedThrough: () => this.#records.get()?.foldedThrough ?? 0,
      estimate: (outcome) => context.estimate(outcome),
      tools: async (model) => this.#tools(model),
      channel: (target) => {
        const adapter = adapterFor(this.env, target.platform);
        return adapter ? adapterChannel(adapter, target) : null;
      },
      log: logLines(logger.child(`session ${sessionId}`)),
      onTurnStart: (turn) => {
        this.#records.update({ activeTurnId: turn.turnId, turnStartedAt: Date.now() });
        void this.#wakeAt(Date.now() + WATCHDOG_MS);
        this.#copySoon();
      },
      onStored: () => this.#copySoon(),
      onTurnEnd: () => {
        this.#records.update({ activeTurnId: null, turnStartedAt: null });
        this.#copyNow();
        this.#notify();
        context.afterTurn();
      },
      defer: (at) => void this.#wakeAt(at),
      attachments: edgeAttachments(this.env, sessionId, logLines(logger.child(`session ${sessionId}`))),
    };
    this.#runtime = new SessionRuntime(host);
    this.#handoff = new HandoffRunner({
      env: this.env,
      runtime: this.#runtime,
      now: () => Date.now(),
      record: () => this.#records.get(),
      update: (patch) => this.#update(patch),
      log: host.log,
    });
    return this.#runtime;
  }

  #tools(model: ReturnType<typeof createModel>) {
    this.#mcp ??= edgeMcpSource(settings(this.env).mcp);
    return toolsFor(model, { sources: this.#mcp ? [this.#mcp] : [] });
  }

  /** The session row, imported once from D1 for a session older than this object's storage. */
  async #session(sessionId: string): Promise<SessionRecord | null> {
    const local = this.#records.get();
    if (local) return local.id === sessionId ? local : null;
    const imported = await importFromD1(db(this.env), this.#sql, this.#records, sessionId);
    if (imported) this.#init(sessionId);
    return imported;
  }

  #update(patch: Partial<SessionRecord>): SessionRecord | null {
    const rec = this.#records.update(patch);
    this.#copyNow();
    this.#notify();
    return rec;
  }

  #notify(): void {
    this.#changed.resolve();
    this.#changed = Promise.withResolvers<void>();
  }

  #copySoon(): void {
    this.#copyTimer ??= setTimeout(() => this.#copyNow(), FIRST_COPY_DELAY_MS);
  }

  #copyNow(): void {
    if (this.#copyTimer !== null) clearTimeout(this.#copyTimer);
    this.#copyTimer = null;
    void this.#mirror.flush();
  }

  #mirrorFailed(err: unknown): void {
    logger.child("session").error("could not copy the session to D1; retrying", { err });
    void this.#wakeAt(Date.now() + MIRROR_RETRY_MS);
  }

  /** Makes sure the alarm rings by `at` (never later than one already set). */
  async #wakeAt(at: number): Promise<void> {
    if (this.#alarmAt !== null && this.#alarmAt <= at) return;
    const current = await this.ctx.storage.getAlarm();
    if (current !== null && current <= at) {
      this.#alarmAt = current;
      return;
    }
    this.#alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }

  /** Watchdog and recovery: deliveries, handoffs and turns a dead instance left, and the D1 copy. */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    const runtime = this.#runtime;
    if (!runtime || !this.#handoff) return;
    runtime.queue.pruneSeen(Date.now() - SEEN_RETENTION_MS);
    await this.#handoff.reclaim();
    this.#handoff.start();
    if (runtime.executing) await this.#wakeAt(Date.now() + WATCHDOG_MS);
    else await runtime.pump();
    if (this.#mirror.pending()) await this.#mirror.flush();
  }

  // ---- Sessions ----------------------------------------------------------------------

  /** Creates this session (the CLI's POST /v1/sessions); D1 has it when this returns. */
  /** Creates the session; null when this id is taken (the caller makes another: a collision never joins a session). */
  async create(seed: SessionSeed, sessionId: string): Promise<SessionJson | null> {
    if (this.#records.get()) return null;
    const rec = this.#records.put(newRecord(seed, Date.now(), sessionId));
    this.#init(rec.id);
    await this.#mirror.flush();
    return this.#json(rec);
  }

  #json(rec: SessionRecord): SessionJson {
    return sessionJson({ ...withCounters(this.#sql, rec), activeTurnId: this.#runtime?.running ? (rec.activeTurnId ?? "running") : null });
  }

  async describe(sessionId: string): Promise<SessionJson | null> {
    const rec = await this.#session(sessionId);
    return rec ? this.#json(rec) : null;
  }

  /** PATCH /v1/sessions/:id: the title, and the session's own instructions (null clears them). */
  async update(sessionId: string, patch: { title?: string | null; instructions?: string | null }): Promise<SessionJson | null> {
    const rec = await this.#session(sessionId);
    if (!rec) return null;
    const next = this.#update({ ...(patch.title !== undefined ? { title: patch.title } : {}), ...(patch.instructions !== undefined ? { instructions: patch.instructions } : {}) })!;
    await this.#mirror.flush();
    return this.#json(next);
  }

  /** Folds the older turns into the summary now (`/compact`). */
  async compact(sessionId: string): Promise<{ compacted: boolean; folded_messages: number } | null> {
    if (!(await this.#session(sessionId))) return null;
    const result = await this.#context!.compact();
    await this.#mirror.flush();
    return result;
  }

  /** What `/status` shows: the session, its context use against the budget, whether a turn runs. */
  async contextStatus(sessionId: string): Promise<(SessionJson & { context: Awaited<ReturnType<ContextKeeper["status"]>> }) | null> {
    const rec = await this.#session(sessionId);
    if (!rec) return null;
    return { ...this.#json(rec), context: await this.#context!.status() };
  }

  /**
   * `RETENTION_DAYS`: messages older than `cutoff` are folded into the summary if they were
   * not already, then deleted here and in D1 (files too). Returns how many went.
   */
  async applyRetention(sessionId: string, cutoff: number): Promise<number> {
    if (!(await this.#session(sessionId))) return 0;
    const rt = this.#runtime!;
    const last = rt.transcript.lastIdBefore(cutoff);
    if (last > 0) await this.#context!.foldThrough(last);
    const gone = rt.transcript.deleteBefore(cutoff);
    rt.forgetHistory();
    await retainElsewhere(this.env, db(this.env), sessionId, cutoff, gone.turnIds);
    await this.#mirror.flush();
    return gone.deleted;
  }

  /** The `/tools` answer: what the agent can use in this session right now. */
  async toolList(sessionId: string): Promise<string | null> {
    if (!(await this.#session(sessionId))) return null;
    return describeTools(this.#tools(createModel(settings(this.env).model)));
  }

  /** The whole session from its own storage (exports). */
  async exportData(sessionId: string): Promise<SessionExport | null> {
    const rec = await this.#session(sessionId);
    return rec ? exportSession(rec, this.#runtime!) : null;
  }

  /** Brings an exported session back into this empty object (and D1). False when it exists already. */
  async importData(data: SessionExport): Promise<boolean> {
    if (this.#records.get() || (await this.#session(data.session.id))) return false;
    data = await rekeyTakenTurns(db(this.env), data);
    const rec = this.#records.put(recordFromExport(data));
    importSession(data, this.#init(rec.id));
    await this.#mirror.flush();
    return true;
  }

  /** Deletes the session everywhere: D1, its keys' bindings, its files, and this object's storage. */
  async destroy(sessionId: string): Promise<boolean> {
    const rec = await this.#session(sessionId);
    if (!rec) return false;
    this.#runtime?.interrupt({ dropQueued: true });
    await deleteEverywhere(this.env, db(this.env), rec);
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // A fresh start for this instance: nothing of the session is left, in storage or memory.
    this.#runtime = null;
    this.#handoff = null;
    this.#context = null;
    this.#records = new RecordStore(this.#sql, () => this.#migrate());
    this.#mirror = this.#newMirror();
    return true;
  }

  /** `GET …/messages`: the stored transcript, and what of it the summary covers (see transcriptView). */
  async messages(sessionId: string): Promise<TranscriptView | null> {
    const rec = await this.#session(sessionId);
    return rec ? transcriptView(rec, this.#runtime!) : null;
  }

  /** The Inbox bound a session key to this session (/resume, /new, a handoff). */
  async keyed(sessionId: string, sessionKey: string): Promise<void> {
    if (await this.#session(sessionId)) this.#update({ sessionKey, endedAt: null, endReason: null });
  }

  /** The Inbox bound this session's key to another session. */
  async ended(sessionId: string, reason: string): Promise<void> {
    if (await this.#session(sessionId)) this.#update({ endedAt: Date.now(), endReason: reason });
  }

  // ---- Turns -------------------------------------------------------------------------

  /** An API turn, streamed. Refused while a turn runs or waits, or a handoff is in flight. */
  async startTurn(sessionId: string, content: string): Promise<StartTurnResult> {
    const rec = await this.#session(sessionId);
    if (!rec) return { ok: false, code: "not_found", message: `session ${sessionId} not found` };
    if (inFlight(rec)) return { ok: false, code: "handoff_in_flight", message: "a handoff of this session is pending or running" };
    if (this.#runtime!.busy) return { ok: false, code: "turn_in_progress", message: "a turn is already running in this session" };
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const started = this.#runtime!.start({ content, origin: "api" }, new SseSink(writable.getWriter()));
    if (!started.ok) return { ok: false, code: "turn_in_progress", message: "a turn is already running in this session" };
    return { ok: true, turnId: started.turnId, stream: readable };
  }

  /** A platform message from the session's Inbox: stored before this returns, run in order. */
  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    // A seed comes with an id its Inbox has just made: D1 cannot hold that session, so a
    // new chat's first turn does not wait for a D1 read.
    let rec = input.seed && !this.#records.get() ? null : await this.#session(input.sessionId);
    if (!rec && input.seed) {
      rec = this.#records.put(newRecord(input.seed, Date.now(), input.sessionId));
      this.#init(rec.id);
    }
    if (!rec) return { accepted: false, position: -1, found: false };
    const taken = this.#runtime!.enqueue({ content: input.content, origin: "platform", target: input.target, deliveryKey: input.deliveryKey, meta: input.meta ?? {} });
    this.#copySoon();
    return taken ? { accepted: true, position: taken.position, found: true } : { accepted: false, position: -1, found: true };
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

  /**
   * The cron's safety net, for a session D1 shows with a turn running too long or a
   * handoff left pending: runs what the alarm would; a running flag with nothing behind it
   * is cleared. True when there was work.
   */
  async recover(sessionId: string): Promise<boolean> {
    const rec = await this.#session(sessionId);
    if (!rec || !this.#runtime) return false;
    const work = this.#runtime.hasWork() || inFlight(rec);
    if (!work && rec.activeTurnId && !this.#runtime.running) this.#update({ activeTurnId: null, turnStartedAt: null });
    if (work) await this.alarm();
    return work;
  }

  // ---- Handoff (SPEC section 4): the runner holds the rules; these answer the API. ----

  async requestHandoff(sessionId: string, req: HandoffRequest): Promise<HandoffAnswer> {
    if (!(await this.#session(sessionId))) return { ok: false, code: "not_found" };
    const dest = await this.#handoff!.destinationFor(req);
    if (!dest.ok) return { ok: false, code: "no_home_channel", message: dest.message };
    const answer = this.#handoff!.request(req);
    if (answer.ok) await this.#wakeAt(Date.now() + 1_000);
    return answer.ok ? { ok: true, to: dest.to } : answer;
  }

  async handoff(sessionId: string): Promise<{ found: boolean; handoff: HandoffJson }> {
    const rec = await this.#session(sessionId);
    return { found: rec !== null, handoff: rec ? handoffJson(rec) : null };
  }

  async failPendingHandoff(sessionId: string, reason: string): Promise<{ failed: boolean; handoff: HandoffJson }> {
    return (await this.#session(sessionId)) ? this.#handoff!.failPending(reason) : { failed: false, handoff: null };
  }

  async waitHandoff(sessionId: string, state: string | null, timeoutMs: number): Promise<{ found: boolean; handoff: HandoffJson }> {
    if (!(await this.#session(sessionId))) return { found: false, handoff: null };
    return { found: true, handoff: await this.#handoff!.wait(state, timeoutMs, () => this.#changed.promise) };
  }

  async expireHandoff(sessionId: string, claimedBefore: number): Promise<boolean> {
    return (await this.#session(sessionId)) ? this.#handoff!.expire(claimedBefore) : false;
  }
}

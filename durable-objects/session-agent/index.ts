import { DurableObject } from "cloudflare:workers";
import { createModel, toolsFor } from "../../workers/agent/index.ts";
import { edgeMcpSource, type McpToolSource } from "../../workers/agent/mcp/index.ts";
import { readTurnAttachments } from "../../workers/attachments/index.ts";
import { adapterChannel } from "../../workers/conversations/channels.ts";
import { edgeReadDeps, sessionFilesPrefix } from "../../workers/conversations/files.ts";
import type { SessionSeed } from "../../workers/conversations/sessions.ts";
import { db } from "../../workers/db/client.ts";
import { handoffJson, sessionJson, withAttachmentsJson, type HandoffJson, type MessageJson, type SessionJson } from "../../workers/db/json.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import type { ReplyTarget } from "../../workers/platforms/types.ts";
import { durableSql, SessionRuntime, type RuntimeHost, type Sql } from "../../workers/runtime/index.ts";
import { settings } from "../../workers/settings.ts";
import { HandoffRunner } from "./handoff.ts";
import { fail, inFlight, request, STALE_HANDOFF_ERROR, type HandoffRequest } from "./handoff-state.ts";
import { importFromD1 } from "./import.ts";
import { D1Mirror } from "./mirror.ts";
import { newRecord, RecordStore, withCounters, type SessionRecord } from "./record.ts";
import { SseSink } from "./sse.ts";

/** How long a turn may go without the object proving it is alive before recovery kicks in. */
export const WATCHDOG_MS = 30_000;
/** Delivery keys of finished platform turns are remembered this long, against late redeliveries. */
export const SEEN_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** The user message of a short turn reaches D1 with its reply; a longer turn copies it after this. */
const FIRST_COPY_DELAY_MS = 250;
/** A failed copy to D1 is tried again after this long. */
const MIRROR_RETRY_MS = 5_000;

/** Outcome of asking for an API turn. The stream is server-sent events (see SseSink). */
export type StartTurnResult =
  | { ok: true; turnId: string; stream: ReadableStream<Uint8Array> }
  | { ok: false; code: "turn_in_progress" | "handoff_in_flight" | "not_found"; message: string };

/** A platform message (or an internal one) for this session, from its Inbox. */
export interface EnqueueInput {
  sessionId: string;
  content: string;
  target: ReplyTarget;
  /** `<platform>:<delivery id>`: the same key twice is one turn. */
  deliveryKey: string;
  /** How to create the session if this is its first message. */
  seed?: SessionSeed;
  meta?: Record<string, unknown>;
}

export type EnqueueResult = { accepted: boolean; position: number; found: boolean };

export type HandoffAnswer = { ok: true } | { ok: false; code: "turn_in_progress" | "handoff_in_flight" | "not_found" };

/**
 * One per session id: the session's home. It wires capabilities, each in its own file: the
 * turn runtime (queue, busy policy, replies, recovery; shared with the relay gateway), the
 * session row and its handoff state machine, the handoff runner, the SSE sink of API
 * turns, and the D1 mirror. Everything a turn needs is in this object's own SQLite, so a
 * turn reaches the model without a database round trip; D1 gets a copy behind it.
 */
export class SessionAgent extends DurableObject<Env> {
  readonly #sql: Sql;
  readonly #records: RecordStore;
  readonly #mirror: D1Mirror;
  #runtime: SessionRuntime | null = null;
  #handoff: HandoffRunner | null = null;
  #changed = Promise.withResolvers<void>();
  #copyTimer: ReturnType<typeof setTimeout> | null = null;
  #alarmAt: number | null = null;
  /** MCP_SERVERS' tools, listed and cached per object (null: none configured). */
  #mcp: McpToolSource | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = durableSql(ctx.storage);
    this.#records = new RecordStore(this.#sql);
    this.#mirror = new D1Mirror({ db: () => db(this.env), sql: this.#sql, records: this.#records, transcript: () => this.#runtime?.transcript ?? null, onFailure: (err) => this.#mirrorFailed(err) });
    ctx.blockConcurrencyWhile(async () => {
      SessionRuntime.migrate(this.#sql);
      RecordStore.migrate(this.#sql);
      const rec = this.#records.get();
      if (!rec) return;
      this.#init(rec.id);
      // Work a previous instance left: pick it up from the alarm, promptly.
      if (this.#runtime!.hasWork() || rec.handoffState === "running" || rec.handoffState === "pending" || this.#mirror.pending()) await this.#wakeAt(Date.now());
    });
  }

  #init(sessionId: string): SessionRuntime {
    if (this.#runtime) return this.#runtime;
    const host: RuntimeHost = {
      sql: this.#sql,
      session: sessionId,
      clock: { now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as number) },
      busyPolicy: () => settings(this.env).busyPolicy,
      model: () => createModel(settings(this.env).model),
      tools: async (model) => {
        this.#mcp ??= edgeMcpSource(this.env);
        return toolsFor(model, { sources: this.#mcp ? [this.#mcp] : [] });
      },
      channel: (target) => {
        const adapter = adapterFor(this.env, target.platform);
        return adapter ? adapterChannel(adapter, target) : null;
      },
      log: (line) => console.log(`session ${sessionId}: ${line}`),
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
      },
      defer: (at) => void this.#wakeAt(at),
      attachments: (turn, earlier, signal) => readTurnAttachments(turn.meta, earlier, edgeReadDeps(this.env, { platform: turn.target?.platform ?? null, prefix: sessionFilesPrefix(sessionId), turnId: turn.turnId }, host.log), signal),
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
    console.error("could not copy the session to D1; retrying", err instanceof Error ? err.message : String(err));
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
  async create(seed: SessionSeed, sessionId: string): Promise<SessionJson> {
    const rec = this.#records.get() ?? this.#records.put(newRecord(seed, Date.now(), sessionId));
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

  async messages(sessionId: string): Promise<MessageJson[] | null> {
    const rec = await this.#session(sessionId);
    return rec ? this.#runtime!.transcript.rows().map((r) => withAttachmentsJson(r, this.#runtime!.attachments)) : null;
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
    let rec = await this.#session(input.sessionId);
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

  /** Fails a handoff claimed before `claimedBefore` (its runner died or hung past the lease). */
  async expireHandoff(sessionId: string, claimedBefore: number): Promise<boolean> {
    const rec = await this.#session(sessionId);
    if (!rec || rec.handoffState !== "running" || (rec.handoffClaimedAt ?? 0) >= claimedBefore) return false;
    // Left by a dead instance: failed and undone. Hung in this one: failed; it cannot complete now.
    if (await this.#handoff!.reclaim()) return true;
    const patch = fail(rec, STALE_HANDOFF_ERROR, Date.now(), ["running"]);
    if (patch) this.#update(patch);
    return patch !== null;
  }

  // ---- Handoff (SPEC section 4) ------------------------------------------------------

  /** Stores a handoff request and claims it here, at once. Refused while a turn runs or waits. */
  async requestHandoff(sessionId: string, req: HandoffRequest): Promise<HandoffAnswer> {
    const rec = await this.#session(sessionId);
    if (!rec) return { ok: false, code: "not_found" };
    if (this.#runtime!.busy) return { ok: false, code: "turn_in_progress" };
    const patch = request(rec, req, Date.now());
    if (!patch) return { ok: false, code: "handoff_in_flight" };
    this.#update(patch);
    await this.#wakeAt(Date.now() + 1_000);
    queueMicrotask(() => this.#handoff?.start());
    return { ok: true };
  }

  async handoff(sessionId: string): Promise<{ found: boolean; handoff: HandoffJson }> {
    const rec = await this.#session(sessionId);
    return { found: rec !== null, handoff: rec ? handoffJson(rec) : null };
  }

  /** The CLI gave up waiting for pickup: fail the handoff, but only while it is still pending. */
  async failPendingHandoff(sessionId: string, reason: string): Promise<{ failed: boolean; handoff: HandoffJson }> {
    const rec = await this.#session(sessionId);
    if (!rec) return { failed: false, handoff: null };
    const patch = fail(rec, reason, Date.now(), ["pending"]);
    const after = patch ? this.#update(patch)! : rec;
    return { failed: patch !== null, handoff: handoffJson(after) };
  }

  /** The handoff state once it differs from `state` (null: none requested), or after `timeoutMs`. */
  async waitHandoff(sessionId: string, state: string | null, timeoutMs: number): Promise<{ found: boolean; handoff: HandoffJson }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const changed = this.#changed.promise;
      const rec = await this.#session(sessionId);
      if (!rec) return { found: false, handoff: null };
      const left = deadline - Date.now();
      if ((rec.handoffState ?? null) !== state || left <= 0) return { found: true, handoff: handoffJson(rec) };
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([changed, new Promise<void>((r) => (timer = setTimeout(r, left)))]);
      if (timer !== undefined) clearTimeout(timer);
    }
  }
}

import { DurableObject } from "cloudflare:workers";
import { createModel, formatSse, runTurn, toolsFor, type ChatMessage, type TurnEvent, type TurnOutcome } from "../workers/agent/index.ts";
import { busyPolicy, modelConfig } from "../workers/config.ts";
import { db } from "../workers/db/client.ts";
import { failHandoff, getHandoffRow, requestHandoff, STALE_HANDOFF_ERROR, type HandoffRequest } from "../workers/db/handoff.ts";
import { loadSessionTranscript, turnUserMessageId } from "../workers/db/messages.ts";
import { clearRunningFlag, handoffJson } from "../workers/db/sessions.ts";
import { adapterFor } from "../workers/platforms/registry.ts";
import { PlatformReply } from "../workers/platforms/reply.ts";
import type { ReplyTarget } from "../workers/platforms/types.ts";
import { carryOutHandoff, HandoffFailure, type HandoffJob } from "./handoff.ts";
import { handoffScheduler } from "./handoff-scheduler.ts";
import { TurnWriter } from "./turn-writer.ts";

/** How long a turn may go without the object proving it is alive before recovery kicks in. */
export const WATCHDOG_MS = 30_000;
/** Longest a turn's user message waits to reach D1 (it normally goes with the reply). */
export const USER_WRITE_DELAY_MS = 250;
/** Executions of one accepted turn before it is reported failed instead of run again. */
export const MAX_TURN_ATTEMPTS = 2;
/** Delivery keys of finished platform turns are remembered this long, against late redeliveries. */
export const SEEN_RETENTION_MS = 2 * 24 * 60 * 60 * 1000;
/** Stored (and shown) when a turn could not be finished after the object restarted. */
export const RESTART_FAILURE =
  "The agent restarted while answering and could not finish this reply. Your message is kept; send it again to retry.";

/** Outcome of asking for a turn. The stream is server-sent events (delta, then done or error). */
export type StartTurnResult =
  | { ok: true; turnId: string; stream: ReadableStream<Uint8Array> }
  | { ok: false; code: "turn_in_progress" | "not_found"; message: string };

/** A platform message (or an internal one, such as a handoff notice) for this session. */
export interface QueuedTurnInput {
  sessionId: string;
  content: string;
  target: ReplyTarget;
  /** `<platform>:<delivery id>`: the same key twice is one turn. */
  deliveryKey: string;
  origin?: "platform" | "internal";
}

export interface EnqueueResult {
  /** False when this delivery was already taken in (now or earlier). */
  accepted: boolean;
  /** Turns ahead of this one (0: it runs now). */
  position: number;
}

/** Where a turn's progress goes while it runs. */
interface TurnSink {
  start?(): void;
  event(e: TurnEvent): void;
  end(outcome: TurnOutcome): void | Promise<void>;
}

/** A turn accepted by this object, kept in its own storage until it ends. */
interface TurnRecord {
  seq: number;
  turnId: string;
  sessionId: string;
  content: string;
  origin: string;
  state: "queued" | "running";
  attempts: number;
  target: ReplyTarget | null;
  deliveryKey: string | null;
}

interface ActiveTurn {
  turnId: string;
  controller: AbortController;
}

const encoder = new TextEncoder();

/** Streams a turn to an HTTP caller as server-sent events. A caller that goes away is ignored. */
class SseSink implements TurnSink {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  #open = true;

  constructor(writer: WritableStreamDefaultWriter<Uint8Array>) {
    this.#writer = writer;
  }

  #send(event: string, data: unknown): void {
    if (!this.#open) return;
    this.#writer.write(encoder.encode(formatSse(event, data))).catch(() => {
      this.#open = false;
    });
  }

  event(e: TurnEvent): void {
    if (e.type === "text") this.#send("delta", { text: e.text });
  }

  end(o: TurnOutcome): void {
    if (o.error) this.#send("error", o.error);
    else this.#send("done", { finish_reason: o.finishReason });
    this.#writer.close().catch(() => undefined);
  }
}

/** For API turns nobody is listening to any more (re-run after a restart): the result is in D1. */
const detachedSink: TurnSink = {
  event() {},
  end(o) {
    if (o.error) console.warn("detached turn failed", o.error.code);
  },
};

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

const failed = (code: string, message: string): TurnOutcome => ({
  finishReason: "error",
  text: "",
  error: { code, message },
  usage: { input: 0, output: 0 },
  toolCalls: 0,
});

function parseTarget(v: unknown): ReplyTarget | null {
  if (typeof v !== "string" || v === "") return null;
  try {
    return JSON.parse(v) as ReplyTarget;
  } catch {
    return null;
  }
}

/**
 * One per session id. Owns that session's turns, one at a time. API turns stream back to
 * their caller; platform turns queue here (in this object's storage) and reply into their
 * chat. Every accepted turn is kept until it ends, so a restart mid-turn runs it again
 * (once) or records a visible failure. Interrupts cancel exactly this session's turn.
 *
 * Every message of the session is written through this object, so it keeps the
 * transcript in memory and a turn reaches the model without a database round trip.
 */
export class SessionAgent extends DurableObject<Env> {
  #active: ActiveTurn | null = null;
  /** Whether this instance has a watchdog alarm pending (so a turn need not set one). */
  #watchdogArmed = false;
  /** The session's transcript as stored in D1; null until loaded (or after a failure). */
  #transcript: ChatMessage[] | null = null;
  #pumping = false;
  /** Replies still being delivered after their turn ended. */
  #delivering = 0;
  #idleWaiters: Array<() => void> = [];
  /** Callers waiting for a particular turn's end (a handoff waits on its synthetic turn). */
  #turnWaiters = new Map<string, (r: { outcome: TurnOutcome; deliveryError: string | null }) => void>();
  /** The handoff this instance is carrying out, if any. */
  #handoff: Promise<void> | null = null;
  /** Resolved (and replaced) whenever this session's handoff state may have changed. */
  #handoffChanged = Promise.withResolvers<void>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS turns (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        turn_id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        content TEXT NOT NULL,
        origin TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        target TEXT,
        delivery_key TEXT UNIQUE
      )`);
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS seen (delivery_key TEXT PRIMARY KEY, at INTEGER NOT NULL)");
      ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS handoff_jobs (session_id TEXT PRIMARY KEY, job TEXT NOT NULL, started_at INTEGER NOT NULL)");
      // Work left by a previous instance: recover it from the alarm, promptly.
      const leftovers = this.#records().length + ctx.storage.sql.exec("SELECT 1 FROM handoff_jobs").toArray().length;
      if (leftovers > 0) {
        const at = await ctx.storage.getAlarm();
        if (at === null || at > Date.now()) await ctx.storage.setAlarm(Date.now());
        // Nothing may push this recovery alarm later (see #armWatchdog).
        this.#watchdogArmed = true;
      }
    });
  }

  #records(state?: TurnRecord["state"]): TurnRecord[] {
    const cursor = state
      ? this.ctx.storage.sql.exec("SELECT * FROM turns WHERE state = ? ORDER BY seq", state)
      : this.ctx.storage.sql.exec("SELECT * FROM turns ORDER BY seq");
    return cursor.toArray().map((r) => ({
      seq: Number(r.seq),
      turnId: String(r.turn_id),
      sessionId: String(r.session_id),
      content: String(r.content),
      origin: String(r.origin),
      state: r.state === "queued" ? "queued" : "running",
      attempts: Number(r.attempts),
      target: parseTarget(r.target),
      deliveryKey: r.delivery_key === null ? null : String(r.delivery_key),
    }));
  }

  #insert(turnId: string, input: { sessionId: string; content: string; origin: string; state: TurnRecord["state"]; target?: ReplyTarget | null; deliveryKey?: string | null }): void {
    this.ctx.storage.sql.exec(
      "INSERT INTO turns (turn_id, session_id, content, origin, state, attempts, created_at, target, delivery_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
      turnId,
      input.sessionId,
      input.content,
      input.origin,
      input.state,
      input.state === "running" ? 1 : 0,
      Date.now(),
      input.target ? JSON.stringify(input.target) : null,
      input.deliveryKey ?? null,
    );
  }

  /** Resolves once no turn runs or waits here (a handoff waits on its synthetic turn so). */
  async idle(): Promise<void> {
    if (this.#isIdle()) return;
    await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    return this.#active === null && this.#delivering === 0 && this.#records().length === 0;
  }

  #wakeIdleWaiters(): void {
    if (!this.#isIdle()) return;
    for (const w of this.#idleWaiters.splice(0)) w();
  }

  /** Is a turn running or waiting? */
  async status(): Promise<{ running: boolean; queued: number }> {
    return { running: this.#active !== null || this.#records("running").length > 0, queued: this.#records("queued").length };
  }

  async #loadTranscript(sessionId: string): Promise<ChatMessage[] | null> {
    this.#transcript ??= await loadSessionTranscript(db(this.env), sessionId);
    return this.#transcript;
  }

  /**
   * Accepts a turn from the HTTP API and streams it. The turn is recorded (and confirmed)
   * in this object's storage before the stream is returned; it reaches D1 with its reply.
   */
  async startTurn(sessionId: string, content: string): Promise<StartTurnResult> {
    if (this.#active || this.#records().length > 0) {
      return { ok: false, code: "turn_in_progress", message: "a turn is already running in this session" };
    }
    const turnId = crypto.randomUUID();
    // Claimed before the first await, so a concurrent call sees it.
    const active: ActiveTurn = { turnId, controller: new AbortController() };
    this.#active = active;
    let history: ChatMessage[] | null;
    try {
      history = await this.#loadTranscript(sessionId);
    } catch (err) {
      this.#active = null;
      throw err;
    }
    if (!history) {
      this.#active = null;
      return { ok: false, code: "not_found", message: `session ${sessionId} not found` };
    }
    this.#insert(turnId, { sessionId, content, origin: "api", state: "running" });
    this.#armWatchdog();
    const record = this.#records("running")[0]!;
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    void this.#execute(record, active, new SseSink(writable.getWriter()), { fresh: true })
      .finally(() => this.#pump())
      .catch((err: unknown) => console.error("after the turn", errorText(err)));
    return { ok: true, turnId, stream: readable };
  }

  /**
   * Takes in a platform message for this session: stored before this returns, then run in
   * order after any turn ahead of it (or, with BUSY_POLICY=interrupt, after stopping it).
   * The same delivery key twice is one turn.
   */
  async enqueue(input: QueuedTurnInput): Promise<EnqueueResult> {
    const taken = this.#enqueueLocal(input);
    return taken ? { accepted: true, position: taken.position } : { accepted: false, position: -1 };
  }

  #enqueueLocal(input: QueuedTurnInput): { turnId: string; position: number } | null {
    const dup =
      this.ctx.storage.sql.exec("SELECT 1 FROM turns WHERE delivery_key = ?", input.deliveryKey).toArray().length > 0 ||
      this.ctx.storage.sql.exec("SELECT 1 FROM seen WHERE delivery_key = ?", input.deliveryKey).toArray().length > 0;
    if (dup) return null;
    const position = this.#records().length;
    const turnId = crypto.randomUUID();
    this.#insert(turnId, { ...input, origin: input.origin ?? "platform", state: "queued" });
    this.#armWatchdog();
    if (this.#active && busyPolicy(this.env) === "interrupt") this.#active.controller.abort(new Error("superseded by a newer message"));
    void this.#pump().catch((err: unknown) => console.error("queue", errorText(err)));
    return { turnId, position };
  }

  /**
   * Cancels this session's running turn. With `dropQueued`, platform messages waiting
   * behind it are dropped too (the /stop command). Reports what happened.
   */
  async interrupt(opts: { dropQueued?: boolean } = {}): Promise<{ interrupted: boolean; dropped: number }> {
    let dropped = 0;
    if (opts.dropQueued) {
      // A handoff's synthetic turn stays: its handoff waits on it.
      const queued = this.#records("queued").filter((r) => r.origin !== "internal");
      for (const r of queued) this.#forget(r);
      dropped = queued.length;
    }
    const active = this.#active;
    if (!active || active.controller.signal.aborted) return { interrupted: false, dropped };
    active.controller.abort(new Error("interrupted"));
    return { interrupted: true, dropped };
  }

  /** Removes a turn's row; a platform delivery is remembered so a redelivery stays a no-op. */
  #forget(record: TurnRecord): void {
    this.ctx.storage.sql.exec("DELETE FROM turns WHERE turn_id = ?", record.turnId);
    if (record.deliveryKey) {
      this.ctx.storage.sql.exec("INSERT OR REPLACE INTO seen (delivery_key, at) VALUES (?, ?)", record.deliveryKey, Date.now());
    }
  }

  /** Runs queued turns one after another while nothing else runs. */
  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      // Work a dead instance left goes first, so turns keep their order.
      await this.#reclaimHandoffJobs();
      while (!this.#active) {
        const orphan = this.#records("running")[0];
        if (orphan) {
          await this.#recoverTurn(orphan);
          continue;
        }
        const next = this.#records("queued")[0];
        if (!next) break;
        this.ctx.storage.sql.exec("UPDATE turns SET state = 'running', attempts = 1 WHERE seq = ?", next.seq);
        const active: ActiveTurn = { turnId: next.turnId, controller: new AbortController() };
        this.#active = active;
        await this.#execute({ ...next, state: "running", attempts: 1 }, active, await this.#sinkFor(next), { fresh: true });
      }
    } finally {
      this.#pumping = false;
      this.#wakeIdleWaiters();
    }
  }

  async #sinkFor(record: TurnRecord): Promise<TurnSink> {
    if (!record.target) return detachedSink;
    const adapter = adapterFor(this.env, record.target.platform);
    if (!adapter) return detachedSink;
    return new PlatformReply(adapter, record.target);
  }

  /** Watchdog and recovery: re-arms while a turn runs here; recovers turns a dead instance left. */
  override async alarm(): Promise<void> {
    this.#watchdogArmed = false;
    this.ctx.storage.sql.exec("DELETE FROM seen WHERE at < ?", Date.now() - SEEN_RETENTION_MS);
    await this.#reclaimHandoffJobs();
    if (this.#active) {
      this.#armWatchdog();
      return;
    }
    await this.#pump();
  }

  /** A turn a dead instance left running: run it again once, or record a visible failure. */
  async #recoverTurn(record: TurnRecord): Promise<void> {
    if (record.attempts >= MAX_TURN_ATTEMPTS) {
      await this.#failVisibly(record);
      return;
    }
    this.ctx.storage.sql.exec("UPDATE turns SET attempts = attempts + 1 WHERE seq = ?", record.seq);
    const active: ActiveTurn = { turnId: record.turnId, controller: new AbortController() };
    this.#active = active;
    this.#armWatchdog();
    await this.#execute({ ...record, attempts: record.attempts + 1 }, active, await this.#sinkFor(record), { fresh: false });
  }

  /**
   * Called by the cron safety net for a session whose turn looks stuck. With nothing left
   * here, the D1 running flag is stale (its turn's final write was lost): clear it.
   */
  async recover(sessionId: string): Promise<boolean> {
    const jobs = this.ctx.storage.sql.exec("SELECT 1 FROM handoff_jobs").toArray().length;
    if (this.#active) return false;
    if (this.#records().length + (this.#handoff ? 0 : jobs) === 0) {
      await clearRunningFlag(db(this.env), sessionId);
      return false;
    }
    await this.alarm();
    return true;
  }

  /**
   * Makes sure an alarm will look at this object within WATCHDOG_MS. Not awaited and not
   * confirmed before replying: the turn's own row (written first, and confirmed) is the
   * durable record; the alarm only decides how soon a dead instance is noticed, and any
   * later call to this object, or the cron trigger, notices it too.
   */
  #armWatchdog(): void {
    if (this.#watchdogArmed) return;
    this.#watchdogArmed = true;
    this.ctx.storage.setAlarm(Date.now() + WATCHDOG_MS, { allowUnconfirmed: true }).catch((err: unknown) => {
      this.#watchdogArmed = false;
      console.error("could not set the watchdog alarm", err instanceof Error ? err.message : String(err));
    });
  }

  /** Writes a turn's user message and the running flag, unless an earlier attempt did. */
  async #storeUserMessage(record: TurnRecord): Promise<void> {
    const d = db(this.env);
    if ((await turnUserMessageId(d, record.sessionId, record.turnId)) !== null) return;
    const writer = new TurnWriter(d, record.sessionId, record.turnId);
    writer.add({ role: "user", content: record.content });
    await writer.flush();
  }

  async #execute(record: TurnRecord, active: ActiveTurn, sink: TurnSink, opts: { fresh: boolean }): Promise<void> {
    const writer = new TurnWriter(db(this.env), record.sessionId, record.turnId);
    let outcome: TurnOutcome;
    let early: ReturnType<typeof setTimeout> | undefined;
    sink.start?.();
    try {
      let transcript: ChatMessage[] | null;
      if (opts.fresh) {
        // The input is durable in this object's storage, so the model call goes first: the
        // user message reaches D1 with the reply, or after USER_WRITE_DELAY_MS when the
        // turn runs longer.
        transcript = await this.#loadTranscript(record.sessionId);
        const user: ChatMessage = { role: "user", content: record.content };
        transcript?.push(user);
        writer.add(user);
        early = setTimeout(() => void writer.flush().catch(() => undefined), USER_WRITE_DELAY_MS);
      } else {
        // A recovered turn starts from what the dead instance managed to store.
        this.#transcript = null;
        await this.#storeUserMessage(record);
        transcript = await this.#loadTranscript(record.sessionId);
      }
      if (!transcript) throw new Error(`session ${record.sessionId} is gone`);
      const model = createModel(modelConfig(this.env));
      const tools = toolsFor(model);
      const kept = transcript;
      outcome = await runTurn({
        model,
        ...(tools ? { tools } : {}),
        history: [...kept],
        signal: active.controller.signal,
        onEvent: (e) => sink.event(e),
        append: async (m, usage) => {
          kept.push(m);
          writer.add(m, usage);
          // Tool rounds are written as they complete, so a re-run resumes after them.
          if (m.role === "tool" || m.tool_calls) await writer.flush();
        },
      });
      if (early !== undefined) clearTimeout(early);
      await writer.flush(true);
    } catch (err) {
      if (early !== undefined) clearTimeout(early);
      console.error("turn failed", err instanceof Error ? err.message : String(err));
      outcome = failed("internal", "the turn failed inside the gateway");
      await writer.flush(true).catch(() => undefined);
    }
    if (outcome.error) this.#transcript = null; // reload from D1 next time: it is the truth
    this.#forget(record);
    if (this.#active === active) this.#active = null;
    let deliveryError: string | null = null;
    this.#delivering++;
    try {
      await sink.end(outcome);
    } catch (err) {
      deliveryError = err instanceof Error ? err.message : String(err);
      console.error("could not deliver the reply", deliveryError);
    } finally {
      this.#delivering--;
    }
    this.#wakeIdleWaiters();
    const waiter = this.#turnWaiters.get(record.turnId);
    this.#turnWaiters.delete(record.turnId);
    waiter?.({ outcome, deliveryError });
  }

  // ---- Handoff (SPEC section 4) -------------------------------------------------------

  #notifyHandoff(): void {
    this.#handoffChanged.resolve();
    this.#handoffChanged = Promise.withResolvers<void>();
  }

  /**
   * Requests a handoff of this session (the HTTP API checked platform and destination).
   * Refused while a turn runs or another handoff is in flight; otherwise the scheduler
   * is told at once.
   */
  async requestHandoff(sessionId: string, req: HandoffRequest): Promise<{ ok: true } | { ok: false; code: "turn_in_progress" | "handoff_in_flight" | "not_found" }> {
    if (this.#active || this.#records().length > 0) return { ok: false, code: "turn_in_progress" };
    const d = db(this.env);
    if (!(await requestHandoff(d, sessionId, req))) {
      return { ok: false, code: (await getHandoffRow(d, sessionId)) ? "handoff_in_flight" : "not_found" };
    }
    this.#notifyHandoff();
    await handoffScheduler(this.env).notify();
    return { ok: true };
  }

  /** From the scheduler, right after it claimed this session's row: carry it out here. */
  async acceptHandoff(job: HandoffJob): Promise<void> {
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO handoff_jobs (session_id, job, started_at) VALUES (?, ?, ?)", job.sessionId, JSON.stringify(job), Date.now());
    this.#armWatchdog();
    this.#notifyHandoff();
    this.#handoff = this.#runHandoff(job).finally(() => {
      this.#handoff = null;
      this.#notifyHandoff();
    });
  }

  async #runHandoff(job: HandoffJob): Promise<void> {
    const d = db(this.env);
    try {
      await carryOutHandoff(this.env, job, (content, target, deliveryKey) => {
        const taken = this.#enqueueLocal({ sessionId: job.sessionId, content, target, deliveryKey, origin: "internal" });
        if (!taken) throw new HandoffFailure("this handoff's turn already ran once");
        return new Promise((resolve) => this.#turnWaiters.set(taken.turnId, resolve));
      });
    } catch (err) {
      const reason = err instanceof HandoffFailure ? err.message : `handoff failed: ${errorText(err)}`;
      console.warn("handoff failed", job.sessionId, reason);
      // If even this write fails, the cron's lease fails the row later.
      await failHandoff(d, job.sessionId, reason, { onlyStates: ["running"] }).catch((e: unknown) => console.error("could not record the handoff failure", errorText(e)));
    } finally {
      this.ctx.storage.sql.exec("DELETE FROM handoff_jobs WHERE session_id = ?", job.sessionId);
    }
  }

  /**
   * A handoff job left by a dead instance is failed, never carried out again (that could
   * deliver twice), and its synthetic turn, if still waiting, is dropped.
   */
  async #reclaimHandoffJobs(): Promise<void> {
    if (this.#handoff) return;
    const jobs = this.ctx.storage.sql.exec("SELECT session_id FROM handoff_jobs").toArray();
    if (jobs.length === 0) return;
    for (const r of this.#records()) {
      if (r.origin !== "internal" || !r.deliveryKey?.startsWith("handoff:")) continue;
      this.#forget(r);
      await clearRunningFlag(db(this.env), r.sessionId, r.turnId);
    }
    for (const j of jobs) {
      await failHandoff(db(this.env), String(j.session_id), STALE_HANDOFF_ERROR, { onlyStates: ["running"] });
      this.ctx.storage.sql.exec("DELETE FROM handoff_jobs WHERE session_id = ?", j.session_id);
    }
    this.#notifyHandoff();
  }

  /** The CLI gave up waiting for pickup: fail the row, but only while it is still pending. */
  async failPendingHandoff(sessionId: string, reason: string): Promise<boolean> {
    const failed = await failHandoff(db(this.env), sessionId, reason, { onlyStates: ["pending"] });
    this.#notifyHandoff();
    return failed;
  }

  /**
   * The handoff state, once it differs from `state` (null: none requested) or after
   * `timeoutMs`. Woken by every transition made through this object; D1 is re-read at
   * least every second for the ones made elsewhere (the scheduler's claim, the cron).
   */
  async waitHandoff(sessionId: string, state: string | null, timeoutMs: number): Promise<{ found: boolean; handoff: ReturnType<typeof handoffJson> }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const changed = this.#handoffChanged.promise;
      const row = await getHandoffRow(db(this.env), sessionId);
      if (!row) return { found: false, handoff: null };
      const left = deadline - Date.now();
      if ((row.handoffState ?? null) !== state || left <= 0) return { found: true, handoff: handoffJson(row) };
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([changed, new Promise<void>((r) => (timer = setTimeout(r, Math.min(1000, left))))]);
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  async #failVisibly(record: TurnRecord): Promise<void> {
    this.#transcript = null;
    await this.#storeUserMessage(record);
    const writer = new TurnWriter(db(this.env), record.sessionId, record.turnId);
    writer.add({ role: "assistant", content: RESTART_FAILURE, finish_reason: "error" });
    await writer.flush(true);
    this.#forget(record);
    const sink = await this.#sinkFor(record);
    if (sink !== detachedSink) {
      sink.event({ type: "text", text: RESTART_FAILURE });
      await Promise.resolve(sink.end({ finishReason: "error", text: RESTART_FAILURE, usage: { input: 0, output: 0 }, toolCalls: 0 })).catch(() => undefined);
    }
  }
}

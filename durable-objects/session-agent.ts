import { DurableObject } from "cloudflare:workers";
import { createModel, formatSse, runTurn, toolsFor, type TurnEvent, type TurnOutcome } from "../workers/agent/index.ts";
import { modelConfig } from "../workers/config.ts";
import { db } from "../workers/db/client.ts";
import { appendMessage, loadTranscript, turnUserMessageId } from "../workers/db/messages.ts";
import { clearRunningTurn } from "../workers/db/sessions.ts";

/** How long a turn may go without the object proving it is alive before recovery kicks in. */
export const WATCHDOG_MS = 30_000;
/** Executions of one accepted turn before it is reported failed instead of run again. */
export const MAX_TURN_ATTEMPTS = 2;
/** Stored (and shown) when a turn could not be finished after the object restarted. */
export const RESTART_FAILURE =
  "The agent restarted while answering and could not finish this reply. Your message is kept; send it again to retry.";

/** Outcome of asking for a turn. The stream is server-sent events (delta, then done or error). */
export type StartTurnResult =
  | { ok: true; turnId: string; stream: ReadableStream<Uint8Array> }
  | { ok: false; code: "turn_in_progress"; message: string };

/** Where a turn's progress goes while it runs. */
interface TurnSink {
  event(e: TurnEvent): void;
  end(outcome: TurnOutcome): void;
}

/** A turn accepted by this object, as kept in its own storage until it ends. */
interface TurnRecord {
  seq: number;
  turnId: string;
  sessionId: string;
  content: string;
  origin: string;
  state: "queued" | "running";
  attempts: number;
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

/** For turns nobody is listening to (re-run after a restart): the result is in D1. */
const detachedSink: TurnSink = {
  event() {},
  end(o) {
    if (o.error) console.warn("detached turn failed", o.error.code);
  },
};

/**
 * One per session id. Owns that session's turns: one at a time, each accepted turn kept in
 * this object's storage until it ends, so a restart mid-turn runs it again (once) or
 * records a visible failure. Interrupts cancel exactly this session's turn.
 */
export class SessionAgent extends DurableObject<Env> {
  #active: ActiveTurn | null = null;

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
        created_at INTEGER NOT NULL
      )`);
      // Turns left running by a previous instance: recover them from the alarm, promptly.
      if (this.#records("running").length > 0 && (await ctx.storage.getAlarm()) === null) {
        await ctx.storage.setAlarm(Date.now());
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
    }));
  }

  /** Is a turn running or waiting? */
  async status(): Promise<{ running: boolean; queued: number }> {
    return { running: this.#active !== null || this.#records("running").length > 0, queued: this.#records("queued").length };
  }

  /**
   * Accepts a turn from the HTTP API and streams it. The user message is stored (D1) and
   * the turn recorded (this object's storage) before the stream is returned.
   */
  async startTurn(sessionId: string, content: string): Promise<StartTurnResult> {
    if (this.#active || this.#records().length > 0) {
      return { ok: false, code: "turn_in_progress", message: "a turn is already running in this session" };
    }
    const turnId = crypto.randomUUID();
    // Claimed before the first await, so a concurrent call sees it.
    const active: ActiveTurn = { turnId, controller: new AbortController() };
    this.#active = active;
    let record: TurnRecord;
    try {
      this.ctx.storage.sql.exec(
        "INSERT INTO turns (turn_id, session_id, content, origin, state, attempts, created_at) VALUES (?, ?, ?, 'api', 'running', 1, ?)",
        turnId,
        sessionId,
        content,
        Date.now(),
      );
      record = this.#records("running")[0]!;
      await this.#storeUserMessage(record);
      await this.#armWatchdog();
    } catch (err) {
      this.#active = null;
      this.ctx.storage.sql.exec("DELETE FROM turns WHERE turn_id = ?", turnId);
      throw err;
    }
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    void this.#execute(record, active, new SseSink(writable.getWriter()));
    return { ok: true, turnId, stream: readable };
  }

  /** Cancels this session's running turn. True if there was one to cancel. */
  async interrupt(): Promise<boolean> {
    const active = this.#active;
    if (!active || active.controller.signal.aborted) return false;
    active.controller.abort(new Error("interrupted"));
    return true;
  }

  /** Watchdog and recovery: re-arms while a turn runs here; recovers turns a dead instance left. */
  override async alarm(): Promise<void> {
    if (this.#active) {
      await this.ctx.storage.setAlarm(Date.now() + WATCHDOG_MS);
      return;
    }
    for (const record of this.#records("running")) {
      if (record.attempts >= MAX_TURN_ATTEMPTS) {
        await this.#failVisibly(record);
        continue;
      }
      this.ctx.storage.sql.exec("UPDATE turns SET attempts = attempts + 1 WHERE seq = ?", record.seq);
      const active: ActiveTurn = { turnId: record.turnId, controller: new AbortController() };
      this.#active = active;
      await this.#storeUserMessage(record);
      await this.#armWatchdog();
      await this.#execute({ ...record, attempts: record.attempts + 1 }, active, detachedSink);
    }
  }

  async #storeUserMessage(record: TurnRecord): Promise<void> {
    const d = db(this.env);
    if ((await turnUserMessageId(d, record.sessionId, record.turnId)) !== null) {
      return;
    }
    await appendMessage(d, record.sessionId, { role: "user", content: record.content }, {
      turnId: record.turnId,
      sessionPatch: { activeTurnId: record.turnId, turnStartedAt: Date.now() },
    });
  }

  async #armWatchdog(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now() + WATCHDOG_MS);
  }

  async #execute(record: TurnRecord, active: ActiveTurn, sink: TurnSink): Promise<void> {
    const d = db(this.env);
    let outcome: TurnOutcome;
    try {
      const history = await loadTranscript(d, record.sessionId);
      const model = createModel(modelConfig(this.env));
      const tools = toolsFor(model);
      outcome = await runTurn({
        model,
        ...(tools ? { tools } : {}),
        history,
        signal: active.controller.signal,
        onEvent: (e) => sink.event(e),
        append: async (m, usage) => {
          await appendMessage(d, record.sessionId, m, { turnId: record.turnId, usage });
        },
      });
    } catch (err) {
      console.error("turn failed", err instanceof Error ? err.message : String(err));
      outcome = { finishReason: "error", text: "", error: { code: "internal", message: "the turn failed inside the gateway" }, usage: { input: 0, output: 0 }, toolCalls: 0 };
    }
    await this.#finish(record).catch((err) => console.error("could not close turn", err instanceof Error ? err.message : String(err)));
    if (this.#active === active) this.#active = null;
    sink.end(outcome);
  }

  async #finish(record: TurnRecord): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM turns WHERE turn_id = ?", record.turnId);
    await clearRunningTurn(db(this.env), record.sessionId, record.turnId);
    if (this.#records().length === 0) await this.ctx.storage.deleteAlarm();
  }

  async #failVisibly(record: TurnRecord): Promise<void> {
    const d = db(this.env);
    await appendMessage(d, record.sessionId, { role: "assistant", content: RESTART_FAILURE, finish_reason: "error" }, { turnId: record.turnId });
    await this.#finish(record);
  }
}

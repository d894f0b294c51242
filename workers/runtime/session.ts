import { ProviderError, runTurn, type ChatMessage, type TurnOutcome } from "../agent/index.ts";
import { withAttachments, type TurnAttachments } from "../attachments/index.ts";
import { AttachmentStore } from "./attachments.ts";
import { DeliveryStore } from "./deliveries.ts";
import type { DeliveryOutcome } from "./delivery.ts";
import { TurnEndings } from "./endings.ts";
import { MAX_TURN_ATTEMPTS, type NewTurn, type RuntimeHost, type TurnResult } from "./host.ts";
import { IdleWaiters } from "./idle.ts";
import { TurnQueue, userKeyOf, type TurnRecord } from "./queue.ts";
import { ReplyStreamer, type TurnSink } from "./reply.ts";
import { MissingRowError, migrateAll, type ComponentSchema, type Sql } from "./sql.ts";
import { replyText, RESTART_FAILURE } from "./texts.ts";
import { SentStore } from "./sent.ts";
import { SqlTranscript } from "./transcript.ts";
import { UsageStore } from "./usage.ts";

export type { BusyPolicy, NewTurn, RuntimeHost, TurnResult } from "./host.ts";

interface Active {
  turnId: string;
  controller: AbortController;
}

/** Shown when whether a turn may start could not be checked (its store did not answer). */
const NOT_ADMITTED = "This message was not answered: the daily token allowance could not be checked just now. Please send it again in a minute.";

const failed = (code: string, message: string): TurnOutcome => ({
  finishReason: "error",
  text: "",
  error: { code, message },
  usage: { input: 0, output: 0 },
  toolCalls: 0,
});

/**
 * The turn runtime of one session, the same at the edge (inside `SessionAgent`) and on a
 * relay gateway: a durable queue run one turn at a time (`BUSY_POLICY`: later messages wait,
 * or interrupt), the agent loop over the stored transcript, replies streamed into their chat
 * by edits, final replies delivered durably, usage kept with each message, interrupts of
 * exactly this session, and recovery of whatever a dead instance left: a running turn runs
 * again once (editing the messages it already showed) or ends with a visible failure. How
 * turns end (reply sinks, usage, durable delivery, waiters) is in endings.ts.
 */
export class SessionRuntime {
  readonly queue: TurnQueue;
  readonly transcript: SqlTranscript;
  readonly deliveries: DeliveryStore;
  readonly usage: UsageStore;
  readonly attachments: AttachmentStore;
  readonly sent: SentStore;
  readonly #h: RuntimeHost;
  #active: Active | null = null;
  #pumping = false;
  /** The unfolded transcript in memory, with the stored id of each message. */
  #history: Array<{ id: number; message: ChatMessage }> | null = null;
  readonly #idle = new IdleWaiters(() => this.#isIdle());
  readonly #end: TurnEndings;

  constructor(host: RuntimeHost) {
    this.#h = host;
    this.queue = new TurnQueue(host.sql, host.session);
    this.transcript = new SqlTranscript(host.sql, host.session);
    this.deliveries = new DeliveryStore(host.sql, host.session);
    this.usage = new UsageStore(host.sql, host.session);
    this.attachments = new AttachmentStore(host.sql, host.session);
    this.sent = new SentStore(host.sql, host.session);
    this.#end = new TurnEndings(host, this);
  }

  /** The runtime's tables, per component. */
  static readonly schemas: readonly ComponentSchema[] = [
    TurnQueue.schema,
    SqlTranscript.schema,
    DeliveryStore.schema,
    UsageStore.schema,
    AttachmentStore.schema,
    SentStore.schema,
  ];

  /** Creates or upgrades the runtime's tables (once per storage; on a new one, in one script). */
  static migrate(sql: Sql): void {
    migrateAll(sql, SessionRuntime.schemas);
  }

  /**
   * A platform reported a message it had accepted as not delivered: the turn whose reply it
   * showed is recorded as undelivered. False for a message this session did not send.
   */
  deliveryFailed(messageRef: string, reason: string): boolean {
    const turnId = this.sent.turnOf(messageRef);
    if (turnId === null) return false;
    this.sent.fail(turnId, reason, this.#h.clock.now());
    this.#h.log(`the reply of turn ${turnId} was not delivered (${reason}); it is kept in the transcript`);
    return true;
  }

  /** A turn runs, waits, or a reply is still being delivered. */
  get busy(): boolean {
    return this.#active !== null || this.queue.all().length > 0;
  }

  /** A turn runs here now, or a dead instance left one running (it is re-run). */
  get running(): boolean {
    return this.#active !== null || this.queue.all("running").length > 0;
  }

  /** A turn is executing in this instance right now. */
  get executing(): boolean {
    return this.#active !== null;
  }

  /** Anything left for this runtime to do (turns, or deliveries not yet confirmed). */
  hasWork(): boolean {
    return this.queue.all().length > 0 || this.deliveries.all().length > 0;
  }

  /** The stored transcript not yet folded into a summary, cached in memory (this runtime is its only writer). */
  history(): ChatMessage[] {
    return this.#cached().map((h) => h.message);
  }

  /** Stored ids of `history()`'s messages, in order. */
  historyIds(): number[] {
    return this.#cached().map((h) => h.id);
  }

  #cached(): Array<{ id: number; message: ChatMessage }> {
    this.#history ??= this.transcript.load(this.#h.foldedThrough?.() ?? 0);
    return this.#history;
  }

  /** Drops the cached transcript (after something else changed the stored one). */
  forgetHistory(): void {
    this.#history = null;
  }

  /**
   * Takes in a message: stored before this returns, then run in order after any turn ahead
   * of it (with BUSY_POLICY=interrupt, after stopping it). The same delivery key twice is one
   * turn. Returns null for a duplicate.
   */
  enqueue(input: NewTurn): { turnId: string; position: number } | null {
    const turnId = crypto.randomUUID();
    const taken = this.queue.add(
      {
        turnId,
        content: input.content,
        origin: input.origin,
        state: "queued",
        target: input.target ?? null,
        deliveryKey: input.deliveryKey ?? null,
        meta: input.meta ?? {},
      },
      this.#h.clock.now(),
    );
    if (!taken) return null;
    if (this.#active && input.origin !== "internal" && this.#h.busyPolicy() === "interrupt")
      this.#active.controller.abort(new Error("superseded by a newer message"));
    void this.pump().catch((err: unknown) => this.#h.log("queue: pumping failed", err));
    return { turnId, position: taken.position };
  }

  /**
   * Runs a turn at once, streaming to `sink` (an API caller); refused while anything runs or
   * waits here. The turn is stored before this returns.
   */
  start(input: NewTurn, sink: TurnSink): { ok: true; turnId: string } | { ok: false } {
    if (this.busy) return { ok: false };
    const turnId = crypto.randomUUID();
    this.queue.add(
      { turnId, content: input.content, origin: input.origin, state: "running", target: null, deliveryKey: input.deliveryKey ?? null, meta: input.meta ?? {} },
      this.#h.clock.now(),
    );
    const active: Active = { turnId, controller: new AbortController() };
    this.#active = active;
    const rec = this.queue.get(turnId);
    if (!rec) throw new MissingRowError(`turn ${turnId} was not stored`);
    void this.#execute(rec, active, sink)
      .finally(() => this.pump())
      .catch((err: unknown) => this.#h.log("after the turn: failed", err));
    return { ok: true, turnId };
  }

  /** Resolves with the result of `turnId` once it ended (a handoff waits on its turn). */
  waitTurn(turnId: string): Promise<TurnResult> {
    return this.#end.wait(turnId);
  }

  /**
   * Cancels the running turn; with `dropQueued` (the /stop command) platform messages
   * waiting behind it are dropped too (a handoff's own turn stays: its handoff waits on it).
   */
  interrupt(opts: { dropQueued?: boolean } = {}): { interrupted: boolean; dropped: number } {
    let dropped = 0;
    if (opts.dropQueued) {
      for (const r of this.queue.all("queued").filter((r) => r.origin !== "internal")) {
        this.queue.forget(r, this.#h.clock.now());
        dropped++;
      }
    }
    const active = this.#active;
    if (!active || active.controller.signal.aborted) return { interrupted: false, dropped };
    active.controller.abort(new Error("interrupted"));
    return { interrupted: true, dropped };
  }

  /** Resolves once nothing runs, waits or is being delivered here. */
  idle(): Promise<void> {
    return this.#idle.wait();
  }

  #isIdle(): boolean {
    return this.#active === null && !this.#end.delivering && !this.#pumping && this.queue.all().length === 0;
  }

  #wake(): void {
    this.#idle.check();
  }

  /**
   * Runs what is stored, in order: replies still to deliver, a turn a dead instance left
   * running (again, once), then queued turns one after another.
   */
  async pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      await this.#end.resume();
      while (!this.#active) {
        const orphan = this.queue.all("running")[0];
        if (orphan) {
          await this.#recover(orphan);
          continue;
        }
        const next = this.queue.all("queued")[0];
        if (!next) break;
        const active: Active = { turnId: next.turnId, controller: new AbortController() };
        this.#active = active;
        const rec = this.queue.start(next.turnId);
        await this.#execute(rec, active, this.#end.sinkFor(rec));
      }
    } finally {
      this.#pumping = false;
      this.#wake();
    }
  }

  async #recover(rec: TurnRecord): Promise<void> {
    // Died after the answer was stored, before the turn ended (a live edit hung, say): deliver that answer.
    const answer = this.transcript.storedAnswer(rec.turnId);
    if (answer) {
      this.#h.log(`turn ${rec.turnId} left by a stopped instance was already answered; delivering the stored reply`);
      const outcome: TurnOutcome = { finishReason: answer.finish_reason ?? "stop", text: answer.content ?? "", usage: { input: 0, output: 0 }, toolCalls: 0 };
      return this.#end.endStored(rec, outcome, replyText(outcome));
    }
    if (rec.attempts >= MAX_TURN_ATTEMPTS) return this.#failVisibly(rec);
    const active: Active = { turnId: rec.turnId, controller: new AbortController() };
    this.#active = active;
    const again = this.queue.start(rec.turnId);
    this.#h.log(`re-running turn ${rec.turnId} left by a stopped instance (attempt ${again.attempts})`);
    await this.#execute(again, active, this.#end.sinkFor(again));
  }

  /** The turn's user message (its words, then a note per attachment), or null when an earlier attempt (a re-run's) stored it. */
  #userMessage(rec: TurnRecord, got: TurnAttachments | null): ChatMessage | null {
    if (rec.attempts > 1 && this.transcript.hasTurnUser(rec.turnId)) return null;
    return { role: "user", content: got ? [rec.content.trim(), got.text].filter(Boolean).join("\n\n") : rec.content };
  }

  /** Stores the turn's user message unless an earlier attempt did. */
  #storeUser(rec: TurnRecord, got: TurnAttachments | null = null, user = this.#userMessage(rec, got)): void {
    if (!user) return;
    const id = this.#h.sql.transaction(() => {
      const stored = this.transcript.appendOne({ message: user, turnId: rec.turnId, userKey: userKeyOf(rec), at: this.#h.clock.now() });
      if (got) this.attachments.put(rec.turnId, got.records, this.#h.clock.now());
      return stored;
    });
    this.#history?.push({ id, message: user });
    this.#h.onStored?.();
  }

  async #execute(rec: TurnRecord, active: Active, sink: TurnSink | ReplyStreamer): Promise<void> {
    if (this.#h.admit) {
      const verdict = await this.#h.admit(rec).catch((err: unknown) => {
        this.#h.log(`turn ${rec.turnId}: could not check whether it may start`, err);
        return { ok: false as const, notice: NOT_ADMITTED };
      });
      if (!verdict.ok) return this.#refuse(rec, active, verdict.notice);
    }
    this.#h.onTurnStart?.(rec);
    let outcome: TurnOutcome;
    sink.start?.();
    let got: TurnAttachments | null = null;
    // Undefined until the attachments are read; null when an earlier attempt stored it.
    let user: ChatMessage | null | undefined;
    let begun = false;
    // Once its attachments are read: stores the user message once, when its first model request
    // has gone, else before anything else of the turn is stored or it ends. Never throws: a
    // message that cannot be stored stops the turn (its request too).
    const begin = () => {
      if (begun || user === undefined) return;
      begun = true;
      try {
        this.#storeUser(rec, got, user);
        if (!(sink instanceof ReplyStreamer)) sink.sent?.();
      } catch (err) {
        this.#h.log(`turn ${rec.turnId}: its message could not be stored`, err);
        active.controller.abort(err);
      }
    };
    try {
      // Files an earlier attempt of this turn kept (a first attempt has none).
      const kept = rec.attempts > 1 ? this.attachments.forTurn(rec.turnId) : [];
      got = this.#h.attachments ? await this.#h.attachments(rec, kept, active.controller.signal) : null;
      user = this.#userMessage(rec, got);
      await this.#h.ready?.();
      const model = got ? withAttachments(this.#h.model(), got) : this.#h.model();
      const tools = await this.#h.tools(model, active.controller.signal);
      const prepare = this.#h.prepare;
      const history = this.history();
      outcome = await runTurn({
        model,
        ...(tools ? { tools } : {}),
        ...(this.#h.fetch ? { fetch: this.#h.fetch } : {}),
        history: user ? [...history, user] : history,
        // The user message is stored once the request has gone (one sent after a write waits for its
        // commit: the object's output gate). A crash between the two re-runs the turn from its queue row.
        onSent: begin,
        // Before every model call (tool rounds included), the request within the budget.
        ...(prepare ? { prepare: (transcript: readonly ChatMessage[]) => prepare(transcript, rec, this.historyIds()) } : {}),
        signal: active.controller.signal,
        onEvent: (e) => sink.event(e),
        append: async (m, usage) => {
          begin();
          const stored = m.role === "assistant" ? { ...m, model: model.id } : m;
          const row = { turnId: rec.turnId, usage, model: m.role === "assistant" ? model.id : null, userKey: userKeyOf(rec), at: this.#h.clock.now() };
          const id = this.transcript.appendOne({ message: stored, ...row });
          this.#history?.push({ id, message: stored });
          this.#h.onStored?.();
        },
      });
    } catch (err) {
      this.#h.log(`turn ${rec.turnId} failed`, err);
      // A provider that cannot even be built (LLM_PROVIDER misconfigured) says why.
      outcome = err instanceof ProviderError ? failed(err.code, err.message) : failed("internal", "the turn failed inside the agent runtime");
      this.forgetHistory();
    }
    begin();
    const tokens = this.#end.recordUsage(rec, outcome);
    let delivery: DeliveryOutcome | null = null;
    const target = rec.target;
    if (sink instanceof ReplyStreamer && target) {
      const end = await sink.end(outcome);
      this.#end.pendStreamed(rec, target, end);
      if (this.#active === active) this.#active = null;
      this.#h.onTurnEnd?.(rec, outcome);
      delivery = end.shown ? { end: "delivered", error: null } : await this.#end.deliver(rec.turnId, target);
    } else {
      this.queue.forget(rec, this.#h.clock.now());
      if (this.#active === active) this.#active = null;
      this.#h.onTurnEnd?.(rec, outcome);
      await Promise.resolve(sink.end(outcome)).catch(() => undefined);
    }
    await this.#h.onUsage?.(rec, tokens).catch((err: unknown) => this.#h.log(`turn ${rec.turnId}: its usage was not settled`, err));
    this.#wake();
    this.#end.settle(rec.turnId, { outcome, delivery });
  }

  /** A turn refused at its start (see RuntimeHost.admit): nothing is stored; `notice` goes to its chat. */
  async #refuse(rec: TurnRecord, active: Active, notice: string | null): Promise<void> {
    this.#h.log(`turn ${rec.turnId} was not started${notice ? `: ${notice}` : ""}`);
    if (this.#active === active) this.#active = null;
    const outcome: TurnOutcome = {
      finishReason: "error",
      text: notice ?? "",
      error: { code: "not_admitted", message: notice ?? "not admitted" },
      usage: { input: 0, output: 0 },
      toolCalls: 0,
    };
    if (notice) return this.#end.endStored(rec, outcome, notice);
    this.#end.endUndelivered(rec, outcome);
    this.#wake();
  }

  /** Drops folded messages from memory (they stay stored). */
  forgetThrough(id: number): void {
    if (this.#history) this.#history = this.#history.filter((h) => h.id > id);
  }

  async #failVisibly(rec: TurnRecord): Promise<void> {
    this.#storeUser(rec);
    this.transcript.append([{ message: { role: "assistant", content: RESTART_FAILURE, finish_reason: "error" }, turnId: rec.turnId, at: this.#h.clock.now() }]);
    this.forgetHistory();
    this.#h.onStored?.();
    const outcome: TurnOutcome = { finishReason: "error", text: RESTART_FAILURE, usage: { input: 0, output: 0 }, toolCalls: 0 };
    await this.#end.endStored(rec, outcome, RESTART_FAILURE);
  }
}

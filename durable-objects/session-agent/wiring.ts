import { createModel, dohResolver, toolsFor } from "../../workers/agent/index.ts";
import { edgeMcpSource, type McpToolSource } from "../../workers/agent/mcp/index.ts";
import { adapterChannel } from "../../workers/conversations/channels.ts";
import { edgeAttachments } from "../../workers/conversations/files.ts";
import { logger, logLines } from "../../workers/log/index.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { ContextKeeper, SessionRuntime, type RuntimeHost, type Sql } from "../../workers/runtime/index.ts";
import { settings } from "../../workers/settings.ts";
import { SessionBudget } from "./budget.ts";
import { HandoffRunner } from "./handoff.ts";
import { D1Mirror } from "./mirror.ts";
import type { RecordStore, SessionRecord } from "./record.ts";
import { MIRROR_RETRY_MS, WATCHDOG_MS } from "./types.ts";
import type { WakeUp } from "./wake.ts";

/** The agent's tools for a model: the built-in ones and MCP_SERVERS' (listed and cached per object). */
export class SessionTools {
  readonly #env: Env;
  /** MCP_SERVERS' tools (null: none configured). */
  #mcp: McpToolSource | null = null;

  constructor(env: Env) {
    this.#env = env;
  }

  for(model: ReturnType<typeof createModel>) {
    this.#mcp ??= edgeMcpSource(settings(this.#env).mcp); // No DNS API here: fetch_url resolves over DNS-over-HTTPS.
    return toolsFor(model, { resolve: dohResolver(settings(this.#env).fetchUrlDohUrl), sources: this.#mcp ? [this.#mcp] : [] });
  }
}

/** The D1 copy of the session in `sql`; a failed copy is logged and retried by the object's alarm. */
export function newMirror(env: Env, sql: Sql, records: RecordStore, runtime: () => SessionRuntime | null, wake: WakeUp): D1Mirror {
  const onFailure = (err: unknown): void => {
    logger.child("session").error("could not copy the session to D1; retrying", { err });
    void wake.by(Date.now() + MIRROR_RETRY_MS);
  };
  return new D1Mirror({ d1: () => env.DB, sql, records, runtime, onFailure });
}

/** What the session object lends the parts it wires (read when used: `destroy` replaces the record store and mirror). */
export interface WiringHost {
  readonly sessionId: string;
  readonly env: Env;
  readonly storage: DurableObjectStorage;
  readonly sql: Sql;
  readonly wake: WakeUp;
  readonly tools: SessionTools;
  records(): RecordStore;
  mirror(): D1Mirror;
  /** The object's loaded runtime. */
  runtime(): SessionRuntime;
  /** Applies a change to the session row (and tells waiters and the D1 mirror). */
  update(patch: Partial<SessionRecord>): SessionRecord | null;
  /** Wakes whoever waits for a change (`idle`, handoff waits). */
  notify(): void;
  /** A turn ended: once its D1 copy is done, the alarm goes if nothing is left to wake for. */
  rest(): void;
}

/** The parts of a session object made once its session row exists. */
export interface SessionParts {
  runtime: SessionRuntime;
  handoff: HandoffRunner;
  context: ContextKeeper;
  budget: SessionBudget;
}

/**
 * Wires the session's turn runtime to the object: the context keeper (summary, budget
 * of the model's requests), the daily budget, the host the runtime calls back (turn start and
 * end update the row, wake the watchdog and the D1 mirror), and the handoff runner.
 */
export function wireSession(o: WiringHost): SessionParts {
  const { env, sessionId } = o;
  const context = new ContextKeeper({
    state: () => {
      const rec = o.records().get();
      return rec
        ? {
            summary: rec.summary ?? null,
            foldedThrough: rec.foldedThrough ?? 0,
            instructions: rec.instructions ?? null,
            source: rec.source,
            chatType: rec.chatType,
          }
        : null;
    },
    saveSummary: (summary, foldedThrough) => void o.update({ summary, foldedThrough }),
    runtime: () => o.runtime(),
    model: () => createModel(settings(env).model),
    settings: () => ({ systemPrompt: settings(env).systemPrompt, budget: settings(env).contextTokens }),
    now: () => Date.now(),
    log: logLines(logger.child(`session ${sessionId}`)),
  });
  const budget = new SessionBudget(env, sessionId, o.storage.kv);
  const host: RuntimeHost = {
    sql: o.sql,
    session: sessionId,
    clock: { now: () => Date.now(), setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as number) },
    busyPolicy: () => settings(env).busyPolicy,
    model: () => createModel(settings(env).model),
    prepare: (transcript, turn, ids) => context.prepare(transcript, turn, ids),
    foldedThrough: () => o.records().get()?.foldedThrough ?? 0,
    estimate: (outcome) => context.estimate(outcome),
    tools: async (model) => o.tools.for(model),
    channel: (target) => {
      const adapter = adapterFor(env, target.platform);
      return adapter ? adapterChannel(adapter, target) : null;
    },
    log: logLines(logger.child(`session ${sessionId}`)),
    onTurnStart: (turn) => {
      o.records().update({ activeTurnId: turn.turnId, turnStartedAt: Date.now() });
      void o.wake.by(Date.now() + WATCHDOG_MS);
      o.mirror().soon();
    },
    onStored: () => o.mirror().soon(),
    admit: (turn) => budget.admit(turn),
    onUsage: async (turn, tokens) => budget.settle(turn, tokens),
    onTurnEnd: (_turn, outcome) => {
      o.records().update({ activeTurnId: null, turnStartedAt: null });
      // More turns waiting (a burst of messages): this one's copy goes with a later one's, within
      // FIRST_COPY_DELAY_MS at the latest: one D1 batch for the burst instead of one per turn. Not
      // with DAILY_TOKEN_BUDGET set: the next turn's admission reads this one's usage from D1 (the
      // refusal says "used up" from the usage rows, "busy elsewhere" from reservations alone).
      if (runtime.queue.all().length > 0 && settings(env).dailyTokenBudget === null) o.mirror().soon();
      else o.mirror().now();
      o.notify();
      context.afterTurn(outcome);
      o.rest();
    },
    defer: (at) => void o.wake.by(at),
    attachments: edgeAttachments(env, sessionId, logLines(logger.child(`session ${sessionId}`))),
  };
  const runtime = new SessionRuntime(host);
  const handoff = new HandoffRunner({
    env,
    runtime,
    now: () => Date.now(),
    record: () => o.records().get(),
    update: (patch) => o.update(patch),
    log: host.log,
  });
  return { runtime, handoff, context, budget };
}

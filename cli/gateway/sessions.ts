import type { ChatModel, ToolRegistry } from "../../workers/agent/index.ts";
import type { ReplyTarget } from "../../workers/platforms/types.ts";
import type { Descriptor } from "../../workers/relay/frames.ts";
import { ContextKeeper, SessionRuntime, type BusyPolicy, type Clock, type RuntimeHost } from "../../workers/runtime/index.ts";
import { relayChannel, type RelayedChat } from "./channel.ts";
import type { Outbox } from "./outbox.ts";
import type { GatewayStore } from "./store.ts";

export interface SessionsDeps {
  store: GatewayStore;
  model: ChatModel;
  tools: (model: ChatModel, signal: AbortSignal) => Promise<ToolRegistry | undefined>;
  outbox: Outbox;
  descriptor: (platform: string) => Descriptor | undefined;
  clock: Clock;
  busyPolicy: BusyPolicy;
  /** `SYSTEM_PROMPT` and `LLM_CONTEXT_TOKENS`. */
  context: { systemPrompt: string | undefined; budget: number };
  log: (line: string, err?: unknown) => void;
  fetch?: typeof fetch;
  /** Reads a turn's attachments (from the connector's links). */
  attachments?: RuntimeHost["attachments"];
}

/** A relayed chat as the runtime's (opaque) reply target. */
export function relayedTarget(chat: RelayedChat): ReplyTarget {
  return { platform: chat.platform as ReplyTarget["platform"], private: chat.private, ref: JSON.stringify(chat) };
}

function chatOf(target: ReplyTarget): RelayedChat | null {
  try {
    const c = JSON.parse(target.ref) as RelayedChat;
    return typeof c.chatId === "string" && typeof c.platform === "string" ? c : null;
  } catch {
    return null;
  }
}

/** Where a session key (`agent:main:<platform>:<chat_type>:…#<generation>`) talks. */
function whereOfKey(sessionRef: string): { source: string; chatType: string | null } {
  const [, , platform = "cli", chatType = null] = sessionRef.replace(/#\d+$/, "").split(":");
  return { source: platform, chatType };
}

/**
 * The gateway's sessions: one turn runtime per session (a key and its generation), all
 * over one SQLite file, exactly the runtime the edge runs in its session objects. Replies
 * stream by edits through the relay; BUSY_POLICY applies; what an earlier run left (turns,
 * deliveries) is resumed at start.
 */
export class GatewaySessions {
  readonly #d: SessionsDeps;
  readonly #runtimes = new Map<string, SessionRuntime>();

  constructor(deps: SessionsDeps) {
    this.#d = deps;
  }

  runtime(sessionRef: string): SessionRuntime {
    let rt = this.#runtimes.get(sessionRef);
    if (!rt) {
      const d = this.#d;
      const log = (line: string, err?: unknown) => d.log(`session ${sessionRef.replace(/#\d+$/, "")}: ${line}`, err);
      const where = whereOfKey(sessionRef);
      // The same instructions, context budget and rolling summary as a session at the edge.
      const context: ContextKeeper = new ContextKeeper({
        state: () => ({ ...d.store.summary(sessionRef), instructions: null, ...where }),
        saveSummary: (summary, foldedThrough) => d.store.saveSummary(sessionRef, summary, foldedThrough),
        runtime: () => runtime,
        model: () => d.model,
        settings: () => d.context,
        now: () => d.clock.now(),
        log,
      });
      const runtime: SessionRuntime = new SessionRuntime({
        sql: d.store.sql,
        session: sessionRef,
        clock: d.clock,
        busyPolicy: () => d.busyPolicy,
        model: () => d.model,
        tools: (model, signal) => d.tools(model, signal),
        channel: (target) => {
          const chat = chatOf(target);
          return chat ? relayChannel(d.outbox, chat, d.descriptor(chat.platform)) : null;
        },
        log,
        prepare: (transcript, turn, ids) => context.prepare(transcript, turn, ids),
        foldedThrough: () => d.store.summary(sessionRef).foldedThrough,
        estimate: (outcome) => context.estimate(outcome),
        onTurnEnd: (_turn, outcome) => context.afterTurn(outcome),
        ...(d.fetch ? { fetch: d.fetch } : {}),
        ...(d.attachments ? { attachments: d.attachments } : {}),
      });
      rt = runtime;
      this.#runtimes.set(sessionRef, rt);
    }
    return rt;
  }

  /** The current runtime of a session key. */
  forKey(sessionKey: string): SessionRuntime {
    return this.runtime(this.#d.store.sessionRef(sessionKey));
  }

  /** Runs what an earlier run of the gateway left: re-runs its turns, finishes its deliveries. */
  resume(): void {
    for (const ref of this.#d.store.sessionsWithWork())
      void this.runtime(ref)
        .pump()
        .catch((err: unknown) => this.#d.log(`resuming ${ref}: failed`, err));
  }

  /** Stops every running turn (the gateway is stopping); returns their session keys. */
  interruptAll(): string[] {
    const keys: string[] = [];
    for (const [ref, rt] of this.#runtimes) if (rt.interrupt().interrupted) keys.push(ref.replace(/#\d+$/, ""));
    return keys;
  }

  /** Resolves once no session runs or delivers anything. */
  async idle(): Promise<void> {
    await Promise.all([...this.#runtimes.values()].map((rt) => rt.idle()));
  }
}

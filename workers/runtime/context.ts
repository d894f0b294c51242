import {
  calibratedRatio,
  ESTIMATE,
  estimatingCounter,
  planContext,
  requestTokens,
  splitTurns,
  summarise,
  systemMessage,
  VERBATIM_TURNS,
  type AgentChatType,
  type AgentPlatform,
  type ChatMessage,
  type ChatModel,
  type TokenCounter,
  type TurnOutcome,
  type Usage,
} from "../agent/index.ts";
import { isOperatorSource, isPlatformName } from "../platforms/names.ts";
import type { TurnRecord } from "./queue.ts";
import type { SessionRuntime } from "./session.ts";

/** What a session keeps about its context, wherever it runs (a session object, a gateway's SQLite). */
export interface ContextState {
  summary: string | null;
  /** Stored id of the last message folded into the summary (0: none). */
  foldedThrough: number;
  /** The session's own instructions. */
  instructions: string | null;
  /** Where the session started: "cli", "console" or a platform name. */
  source: string;
  /** Its chat type there ("dm", "group", "thread", …), null for the CLI. */
  chatType: string | null;
}

/** What keeping a session within its budget needs from where it runs. */
export interface ContextHost {
  state(): ContextState | null;
  /** Keeps a new summary and how far it reaches. */
  saveSummary(summary: string | null, foldedThrough: number): void;
  runtime(): SessionRuntime;
  model(): ChatModel;
  /** `SYSTEM_PROMPT` and `LLM_CONTEXT_TOKENS`. */
  settings(): { systemPrompt: string | undefined; budget: number };
  now(): number;
  /** A line for the log; `err` is the error behind it, kept whole (stack, cause). */
  log(line: string, err?: unknown): void;
}

/** Where the agent is talking, for the context line of its instructions. */
function whereFor(rec: ContextState, turn: TurnRecord) {
  const platform = (turn.target?.platform ?? (isPlatformName(rec.source) ? rec.source : "cli")) as AgentPlatform;
  const handedOffFromCli = isOperatorSource(rec.source) && turn.target !== null;
  const chatType = (handedOffFromCli ? (turn.target?.private ? "dm" : "thread") : rec.chatType) as AgentChatType | null;
  return { platform, chatType, handedOffFromCli };
}

/**
 * Keeps every model request within `LLM_CONTEXT_TOKENS`: instructions (SYSTEM_PROMPT, the
 * session's own, the date and where the agent is), the rolling summary, then the newest turns
 * verbatim. When the history passes ~75% of the budget the older turns are folded into the
 * summary after the turn (by the model; the offline model writes an extractive one); a
 * summary that fails to generate never fails a turn: the oldest turns are trimmed instead,
 * and the log says so. The folded messages stay stored, and leave memory.
 *
 * Tokens are estimated from characters, on the safe side, then calibrated: after each turn
 * whose provider reported its input tokens, the estimate is scaled by how far off it was
 * (the largest ratio of the last few turns), so a session's budget is used as the
 * provider counts it (docs/context.md, "Token counts").
 */
export class ContextKeeper {
  readonly #h: ContextHost;
  #counter: TokenCounter = ESTIMATE;
  /** Ratios observed (provider's input tokens over the uncalibrated estimate), newest last. */
  readonly #ratios: number[] = [];
  /** The turn whose requests {@link #requested} counts, and their uncalibrated estimate. */
  #turnId: string | null = null;
  #requested = 0;
  /** The stored id of the last message the newest plan asked to fold. */
  #foldThrough: number | null = null;
  #folding: Promise<void> | null = null;
  /** Tokens of the last request, for `/status` and estimates. */
  #lastTokens = 0;

  constructor(host: ContextHost) {
    this.#h = host;
  }

  #plan(rec: ContextState, turn: TurnRecord | null, history: readonly ChatMessage[], count: TokenCounter) {
    return planContext({
      system: this.#system(rec, turn),
      summary: rec.summary ?? null,
      history,
      modelId: this.#h.model().id,
      counter: count,
      budget: this.#h.settings().budget,
    });
  }

  get lastTokens(): number {
    return this.#lastTokens;
  }

  #system(rec: ContextState, turn: TurnRecord | null): ChatMessage {
    const s = this.#h.settings();
    const where = turn
      ? whereFor(rec, turn)
      : { platform: (isPlatformName(rec.source) ? rec.source : "cli") as AgentPlatform, chatType: rec.chatType as AgentChatType | null };
    return systemMessage({ systemPrompt: s.systemPrompt, sessionInstructions: rec.instructions, now: this.#h.now(), where });
  }

  /** The request for one model call of `turn` (see RuntimeHost.prepare). */
  prepare(transcript: readonly ChatMessage[], turn: TurnRecord, ids: readonly number[]): ChatMessage[] {
    const rec = this.#h.state();
    if (!rec) return [...transcript];
    const plan = this.#plan(rec, turn, transcript, this.#counter);
    this.#lastTokens = plan.tokens;
    if (this.#turnId !== turn.turnId) {
      this.#turnId = turn.turnId;
      this.#requested = 0;
    }
    // What the provider will be sent, estimated uncalibrated: its report of the same requests calibrates the count.
    this.#requested += requestTokens(ESTIMATE, plan.messages);
    if (plan.omitted > 0) this.#h.log(`context: ${plan.omitted} older message(s) left out of the request to stay within the budget`);
    const id = plan.fold && plan.fold.upTo > 0 ? ids[plan.fold.upTo - 1] : undefined;
    if (id !== undefined) this.#foldThrough = Math.max(this.#foldThrough ?? 0, id);
    return plan.messages;
  }

  /** A turn's tokens when the provider reported none: the request's estimate and the reply's count. */
  estimate(outcome: TurnOutcome): Usage {
    return { input: this.#lastTokens, output: outcome.text ? this.#counter.count(outcome.text) : 0 };
  }

  /** The ratio the counts are calibrated by (1 until the provider reported usage). */
  get ratio(): number {
    return this.#counter.ratio;
  }

  /**
   * After a turn: calibrates the count by the input tokens its provider reported for the
   * turn's requests, then folds what they asked to fold (in the background: never delays a reply).
   */
  afterTurn(outcome?: TurnOutcome): void {
    if (outcome && this.#requested > 0 && outcome.usage.input > 0) {
      const ratio = calibratedRatio(this.#ratios, outcome.usage.input, this.#requested);
      if (ratio !== this.#counter.ratio) this.#counter = estimatingCounter(ratio);
    }
    this.#turnId = null;
    this.#requested = 0;
    const through = this.#foldThrough;
    if (through === null || this.#folding) return;
    this.#foldThrough = null;
    this.#folding = this.#fold(through).finally(() => (this.#folding = null));
  }

  /** `/compact`: folds everything but the newest turns now. */
  async compact(): Promise<{ compacted: boolean; folded_messages: number }> {
    await this.#folding;
    const rt = this.#h.runtime();
    const history = rt.history();
    const turns = splitTurns(history, this.#h.model().id);
    const keep = turns[turns.length - VERBATIM_TURNS];
    if (turns.length <= VERBATIM_TURNS || keep === undefined) return { compacted: false, folded_messages: 0 };
    const upTo = keep.start;
    const id = rt.historyIds()[upTo - 1];
    if (id === undefined || upTo === 0) return { compacted: false, folded_messages: 0 };
    await this.#fold(id);
    return { compacted: true, folded_messages: upTo };
  }

  /** Folds everything up to stored id `through` into the summary now (retention, before deleting old messages). */
  async foldThrough(through: number): Promise<void> {
    await this.#folding;
    if (through > (this.#h.state()?.foldedThrough ?? 0)) await this.#fold(through);
  }

  async #fold(through: number): Promise<void> {
    const rt = this.#h.runtime();
    const rec = this.#h.state();
    if (!rec) return;
    const ids = rt.historyIds();
    const history = rt.history();
    const count = ids.filter((id) => id <= through).length;
    if (count === 0) return;
    const folded = history.slice(0, count);
    let summary = rec.summary ?? null;
    try {
      summary = await summarise(this.#h.model(), summary, folded, undefined, { counter: this.#counter });
    } catch (err) {
      // The mark still moves: the request stays bounded, and these turns are trimmed instead.
      this.#h.log(`context: the summary could not be written; trimming the ${count} oldest message(s) instead`, err);
    }
    this.#h.saveSummary(summary, Math.max(rec.foldedThrough, through));
    rt.forgetThrough(through);
  }

  /** What `/status` shows about the context. */
  async status(): Promise<{ tokens_in_context: number; budget: number; turns: number; summary: boolean }> {
    const rec = this.#h.state();
    const rt = this.#h.runtime();
    const tokens = rec ? this.#plan(rec, null, rt.history(), this.#counter).tokens : 0;
    return { tokens_in_context: tokens, budget: this.#h.settings().budget, turns: rt.usage.totals().turns, summary: Boolean(rec?.summary) };
  }
}

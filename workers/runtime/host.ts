import type { ChatMessage, ChatModel, ToolRegistry, TurnOutcome, Usage } from "../agent/index.ts";
import type { AttachmentRecord, TurnAttachments } from "../attachments/index.ts";
import type { ReplyTarget } from "../platforms/types.ts";
import type { ReplyChannel } from "./channel.ts";
import type { Clock } from "./clock.ts";
import type { DeliveryOutcome } from "./delivery.ts";
import type { TurnOrigin, TurnRecord } from "./queue.ts";
import type { Sql } from "./sql.ts";

/** What to do with a message that arrives while its session runs a turn. */
export type BusyPolicy = "queue" | "interrupt";

/** Executions of one accepted turn before it is reported failed instead of run again. */
export const MAX_TURN_ATTEMPTS = 2;

/** What the runtime needs from where it runs (a Durable Object, or the relay gateway). */
export interface RuntimeHost {
  readonly sql: Sql;
  /** The session this runtime serves (an id at the edge, a key and generation on a gateway). */
  readonly session: string;
  readonly clock: Clock;
  busyPolicy(): BusyPolicy;
  model(): ChatModel;
  /** The tools of the next model call, listed afresh per turn (remote tool servers change). */
  tools(model: ChatModel, signal: AbortSignal): Promise<ToolRegistry | undefined>;
  /** Resolves once what `prepare` needs is loaded (a tokenizer, say). */
  ready?(): Promise<void>;
  /**
   * The request for the model from the transcript so far (instructions, summary, context
   * budget), before every model call of a turn. `ids` are the stored ids of `transcript`'s
   * messages, in order.
   */
  prepare?(transcript: readonly ChatMessage[], turn: TurnRecord, ids: readonly number[]): ChatMessage[];
  /** Messages up to this stored id are folded into a summary: they are not loaded into memory. */
  foldedThrough?(): number;
  /** Tokens of a turn whose provider reported none. */
  estimate?(outcome: TurnOutcome, turn: TurnRecord): Usage;
  /** Where a platform turn's reply goes; null when its platform is gone from the config. */
  channel(target: ReplyTarget): ReplyChannel | null;
  /** A line for the log; `err` is the error behind it, kept whole (stack, cause). */
  log(line: string, err?: unknown): void;
  /**
   * Whether a turn may start now (each attempt, before anything is read or stored): the
   * edge checks `DAILY_TOKEN_BUDGET` here and reserves the turn's tokens. Refused: the turn
   * is dropped and `notice` (if any) shown in its chat instead.
   */
  admit?(turn: TurnRecord): Promise<{ ok: true } | { ok: false; notice: string | null }>;
  /** A turn ended, having used `tokens` (the edge settles its reservation); awaited before the next turn starts. */
  onUsage?(turn: TurnRecord, tokens: number): Promise<void>;
  /** A turn is about to call the model (the edge raises its running flag). */
  onTurnStart?(turn: TurnRecord): void;
  /** Messages were stored (the edge copies them to D1 behind the turn). */
  onStored?(): void;
  onTurnEnd?(turn: TurnRecord, outcome: TurnOutcome): void;
  /** Wake the runtime again at `at` (a Durable Object alarm); without it, waits happen in memory. */
  defer?(at: number): void;
  /** fetch for tools. */
  fetch?: typeof fetch;
  /**
   * Reads the files that came with a turn (platform attachments) before its user message
   * is stored: notes for the message's text, images for the model. `earlier`: what an
   * earlier attempt of this turn read (a re-run must not fetch or transcribe again).
   */
  attachments?(turn: TurnRecord, earlier: readonly AttachmentRecord[], signal: AbortSignal): Promise<TurnAttachments | null>;
}

/** A turn's input. */
export interface NewTurn {
  content: string;
  origin: TurnOrigin;
  target?: ReplyTarget | null;
  deliveryKey?: string | null;
  meta?: Record<string, unknown>;
}

/** How a turn ended, for whoever waits on it (a handoff waits on its notice's turn). */
export interface TurnResult {
  outcome: TurnOutcome;
  /** How its reply's delivery ended (null: a turn with no chat to reply in). */
  delivery: DeliveryOutcome | null;
}

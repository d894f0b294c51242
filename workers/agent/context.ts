import { isOfflineReply } from "./history.ts";
import { OFFLINE_MODEL_ID } from "./offline.ts";
import { repairTranscript } from "./repair.ts";
import { SUMMARY_MAX_TOKENS } from "./summary.ts";
import { MESSAGE_OVERHEAD, REPLY_PRIMING, messageTokens, toolsTokens, truncateToTokens, withMargin, type TokenCounter } from "./tokens.ts";
import type { ChatMessage, ToolSchema } from "./types.ts";
import { itemAt } from "./item-at.ts";

/** `LLM_CONTEXT_TOKENS` when unset. */
export const DEFAULT_CONTEXT_TOKENS = 32_000;
/** Smallest budget accepted: below it the newest turn could not be made to fit. */
export const MIN_CONTEXT_TOKENS = 2_048;
/** Tokens kept free for the reply (at most a quarter of the budget). */
export const DEFAULT_REPLY_RESERVE = 4_096;
/** Folding is asked for when the whole unfolded history would take more than this share of the request limit… */
export const FOLD_AT = 0.75;
/** …and folds the oldest turns until what is left takes at most this share. */
export const FOLD_TO = 0.5;
/** A fold saves at least this share of the limit (unless turns are already left out): each one costs a model call. */
export const FOLD_MIN = 0.1;
/** The newest turns whose tool results are sent whole (while they fit), and which are never folded. */
export const VERBATIM_TURNS = 4;
/** Characters kept of a tool result in an older turn. */
export const OLD_TOOL_RESULT_CHARS = 400;
/** Opens the message that carries the rolling summary. */
export const SUMMARY_PREFIX = "Summary of the earlier conversation (its oldest turns were folded into this summary):\n";
const TRUNCATED = "\n[… cut here: the rest did not fit in the model's context window]";
// Searching this far ahead is enough to re-find a message the repair kept as it was.
const ALIGN_WINDOW = 16;

/** `LLM_CONTEXT_TOKENS` as a budget: default when unset or not a number, never below `MIN_CONTEXT_TOKENS`. */
export function parseContextTokens(raw: string | number | null | undefined): number {
  const n = typeof raw === "number" ? raw : Number.parseInt(String(raw ?? "").trim(), 10);
  if (!Number.isFinite(n) || n <= 0) return DEFAULT_CONTEXT_TOKENS;
  return Math.max(MIN_CONTEXT_TOKENS, Math.floor(n));
}

/** What a request is planned from. */
export interface ContextInput {
  /** The system message (`systemMessage()` from instructions.ts). */
  system: ChatMessage;
  /** The rolling summary of the turns already folded, if any. */
  summary?: string | null;
  /** The history not yet folded, oldest first, as stored (it need not be repaired). */
  history: readonly ChatMessage[];
  /** The model the request is for: a real model never sees offline replies. */
  modelId: string;
  counter: TokenCounter;
  /** `LLM_CONTEXT_TOKENS`; default `DEFAULT_CONTEXT_TOKENS`. */
  budget?: number;
  /** Tokens left for the reply; default `DEFAULT_REPLY_RESERVE`, at most a quarter of the budget. */
  reserve?: number;
  /** Tool schemas sent with the request: counted, never cut. */
  tools?: readonly ToolSchema[];
  verbatimTurns?: number;
  oldToolResultChars?: number;
}

/** The messages to send, and whether older turns should be folded into the summary. */
export interface ContextPlan {
  /** System, summary (if any), then the newest turns; a repaired transcript. */
  messages: ChatMessage[];
  /** Estimated tokens of the request (messages, tools, margin); at most `limit`. */
  tokens: number;
  /** Budget minus the reply reserve. */
  limit: number;
  /** Fold `history.slice(0, upTo)` into the summary (upTo is where a turn starts); null: nothing to fold. */
  fold: { upTo: number } | null;
  /** History messages before the first one sent (left out for lack of room, not folded). */
  omitted: number;
  /** The newest turn alone did not fit and was cut. */
  truncated: boolean;
}

/** A turn: a user message (or a run of them) and everything up to the next one. */
export interface Turn {
  /** Index in the history of its first message. */
  start: number;
  messages: ChatMessage[];
}

/**
 * Splits a history into turns. Offline replies are left out for a real model, and a run of
 * user messages stays in one turn, so cutting at a turn never splits what the repair merges
 * nor a tool call from its results.
 */
export function splitTurns(history: readonly ChatMessage[], modelId: string): Turn[] {
  const dropOffline = modelId !== OFFLINE_MODEL_ID;
  const turns: Turn[] = [];
  let prevRole: string | null = null;
  for (const [i, m] of history.entries()) {
    if (dropOffline && isOfflineReply(m)) continue;
    const current = turns[turns.length - 1];
    if (!current || (m.role === "user" && prevRole !== "user")) turns.push({ start: i, messages: [m] });
    else current.messages.push(m);
    prevRole = m.role;
  }
  return turns;
}

/**
 * Plans one model request under the budget: the system message, the summary as a marked
 * system message, then as many of the newest turns as fit, tool results in older turns
 * shortened. Asks for folding when the unfolded history passes `FOLD_AT` of the limit; cuts
 * the newest turn (tool results first, then text) when even it alone does not fit. Pure
 * and total: it never throws and never returns a request over the limit (tool schemas
 * larger than the limit aside).
 */
export function planContext(input: ContextInput): ContextPlan {
  const { counter } = input;
  const budget = parseContextTokens(input.budget);
  const limit = budget - Math.min(input.reserve ?? DEFAULT_REPLY_RESERVE, Math.floor(budget / 4));
  const keep = input.verbatimTurns ?? VERBATIM_TURNS;
  const chars = input.oldToolResultChars ?? OLD_TOOL_RESULT_CHARS;
  const summary = input.summary?.trim() ? summaryMessage(input.summary.trim()) : null;
  const head = summary ? [input.system, summary] : [input.system];
  const toolsRaw = REPLY_PRIMING + toolsTokens(counter, input.tools);
  const headRaw = toolsRaw + sum(counter, head);
  const turns = splitTurns(input.history, input.modelId);
  const n = turns.length;
  const made: (Prepared | undefined)[] = [];
  const prepare = (i: number, short: boolean) => preparedTurn(counter, itemAt(turns, i), short, chars);
  const turnAt = (i: number) => (made[i] ??= prepare(i, i < n - keep));

  // The newest turns that fit, walking back from the newest. A recent turn too big to send
  // whole goes with its tool results shortened rather than cutting off all before it.
  let first = n;
  let acc = 0;
  while (first > 0) {
    const i = first - 1;
    if (withMargin(headRaw + acc + turnAt(i).raw) > limit && i < n - 1 && i >= n - keep) made[i] = prepare(i, true);
    if (withMargin(headRaw + acc + turnAt(i).raw) > limit) break;
    acc += turnAt(i).raw;
    first = i;
  }

  const fold = foldPoint(counter, turns, (i) => turnAt(i).raw, { first, acc, limit, headRaw, baseRaw: toolsRaw + messageTokens(counter, input.system), keep });
  if (first === n) {
    const fitted = fitNewest(counter, input.system, summary, n > 0 ? turnAt(n - 1).messages : [], toolsRaw, limit, chars);
    return { ...fitted, limit, fold, omitted: turns[n - 1]?.start ?? 0 };
  }
  // Merging across turns only ever saves tokens, but the count that decides is the one of
  // the final messages; should it still be over, the oldest turn sent goes.
  for (;;) {
    const messages = joinTurns(head, made.slice(first) as Prepared[]);
    const tokens = withMargin(toolsRaw + sum(counter, messages));
    if (tokens <= limit) return { messages, tokens, limit, fold, omitted: itemAt(turns, first).start, truncated: false };
    if (first === n - 1) {
      const fitted = fitNewest(counter, input.system, summary, turnAt(first).messages, toolsRaw, limit, chars);
      return { ...fitted, limit, fold, omitted: itemAt(turns, first).start };
    }
    first++;
  }
}

/** A turn made ready to send: repaired, tool results shortened if asked, and its raw tokens. */
interface Prepared {
  messages: ChatMessage[];
  raw: number;
}

// Per counter and turn, keyed by its first message: a turn only grows at its end, so its
// length and last message tell whether an entry is still that turn. One entry per form.
interface PreparedEntry {
  len: number;
  last: ChatMessage;
  chars: number;
  value: Prepared;
}
const preparedMemo = new WeakMap<TokenCounter, WeakMap<ChatMessage, { whole?: PreparedEntry; short?: PreparedEntry }>>();

function preparedTurn(counter: TokenCounter, turn: Turn, short: boolean, chars: number): Prepared {
  let byTurn = preparedMemo.get(counter);
  if (!byTurn) preparedMemo.set(counter, (byTurn = new WeakMap()));
  const key = itemAt(turn.messages, 0);
  const last = itemAt(turn.messages, turn.messages.length - 1);
  let forms = byTurn.get(key);
  if (!forms) byTurn.set(key, (forms = {}));
  const form = short ? "short" : "whole";
  const known = forms[form];
  if (known && known.len === turn.messages.length && known.last === last && known.chars === chars) return known.value;
  const messages = repairKeeping(short ? turn.messages.map((m) => shortened(m, chars)) : turn.messages);
  const value = { messages, raw: sum(counter, messages) };
  forms[form] = { len: turn.messages.length, last, chars, value };
  return value;
}

/**
 * The head and the turns as one repaired transcript. Each turn is repaired already; the
 * only repair left across turns is merging a turn that ends in user text with the next.
 */
function joinTurns(head: readonly ChatMessage[], turns: readonly Prepared[]): ChatMessage[] {
  const out = [...head];
  let merge = false;
  for (const t of turns) {
    const prev = out[out.length - 1];
    if (prev?.role === "user" && typeof prev.content === "string" && t.messages[0]?.role === "user") merge = true;
    out.push(...t.messages);
  }
  return merge ? repairKeeping(out) : out;
}

/**
 * Where to fold, or null. Only turns older than the verbatim ones are folded (their size is
 * what folding can save: the newest turns shrink by themselves as they age), oldest first,
 * at most half the limit at once, until what is left takes at most `FOLD_TO` of the limit.
 * A fold smaller than `FOLD_MIN` of the limit waits, unless turns are already left out.
 */
function foldPoint(
  counter: TokenCounter,
  turns: readonly Turn[],
  turnRaw: (i: number) => number,
  at: { first: number; acc: number; limit: number; headRaw: number; baseRaw: number; keep: number },
): { upTo: number } | null {
  const { first, limit } = at;
  const n = turns.length;
  const candidates = Math.min(n - 1, n - at.keep);
  if (candidates <= 0) return null;
  // Everything fits: the total is known. Otherwise it is over the limit, hence over FOLD_AT.
  if (first === 0 && withMargin(at.headRaw + at.acc) <= FOLD_AT * limit) return null;
  // After the fold the summary may have grown to its bound.
  const base = at.baseRaw + MESSAGE_OVERHEAD + counter.count("system") + counter.count(SUMMARY_PREFIX) + SUMMARY_MAX_TOKENS;
  const suffix: number[] = [];
  for (let i = n - 1, s = 0; i >= first; i--) suffix[i] = s += turnRaw(i);
  let upTo = 0;
  let chunk = 0;
  for (let i = 0; i < candidates; i++) {
    if (i >= first && withMargin(base + itemAt(suffix, i)) <= FOLD_TO * limit) break;
    // The summariser reads the folded turns in one request: keep them to half the limit.
    if (upTo > 0 && chunk + turnRaw(i) > limit / 2) break;
    chunk += turnRaw(i);
    upTo = i + 1;
  }
  if (upTo === 0 || (first === 0 && chunk < FOLD_MIN * limit)) return null;
  return { upTo: itemAt(turns, upTo).start };
}

function summaryMessage(summary: string): ChatMessage {
  return { role: "system", content: `${SUMMARY_PREFIX}${summary}` };
}

function sum(counter: TokenCounter, msgs: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of msgs) n += messageTokens(counter, m);
  return n;
}

const shortenedMemo = new WeakMap<ChatMessage, { chars: number; message: ChatMessage }>();

/** A tool result cut to `chars` with a marker saying so; any other message as it is. Memoised, so counts are too. */
function shortened(m: ChatMessage, chars: number): ChatMessage {
  if (m.role !== "tool" || !m.content || m.content.length <= chars + 100) return m;
  const known = shortenedMemo.get(m);
  if (known?.chars === chars) return known.message;
  const total = m.content.length;
  const message = { ...m, content: `${m.content.slice(0, chars)}\n[… tool result shortened: ${chars} of ${total} characters kept]` };
  shortenedMemo.set(m, { chars, message });
  return message;
}

/**
 * `repairTranscript`, handing back the very input objects the repair kept unchanged, so
 * their memoised token counts stay valid. The result is a repaired transcript.
 */
export function repairKeeping(msgs: readonly ChatMessage[]): ChatMessage[] {
  const fixed = repairTranscript(msgs);
  let j = 0;
  return fixed.map((r) => {
    for (let k = j; k < msgs.length && k < j + ALIGN_WINDOW; k++) {
      const m = itemAt(msgs, k);
      if (sameMessage(r, m)) {
        j = k + 1;
        return m;
      }
    }
    return r;
  });
}

function sameMessage(r: ChatMessage, m: ChatMessage): boolean {
  if (r.role !== m.role || r.content !== m.content || r.tool_call_id !== m.tool_call_id || r.name !== m.name) return false;
  if (r.finish_reason !== m.finish_reason || r.model !== m.model) return false;
  const a = r.tool_calls;
  const b = m.tool_calls;
  if (!a || !b) return a === b;
  return (
    a.length === b.length &&
    a.every((c, i) => {
      const d = itemAt(b, i);
      return c.id === d.id && c.type === d.type && c.function.name === d.function.name && c.function.arguments === d.function.arguments;
    })
  );
}

/**
 * Makes the newest turn fit alone: its largest tool results shortened first, then the
 * largest texts cut, then the summary dropped, then the system message cut.
 */
function fitNewest(
  counter: TokenCounter,
  system: ChatMessage,
  summary: ChatMessage | null,
  turn: ChatMessage[],
  toolsRaw: number,
  limit: number,
  chars: number,
): { messages: ChatMessage[]; tokens: number; truncated: boolean } {
  let sys = system;
  let sum_ = summary;
  const msgs = [...turn];
  const all = () => (sum_ ? [sys, sum_, ...msgs] : [sys, ...msgs]);
  const total = () => withMargin(toolsRaw + sum(counter, all()));
  const done = () => {
    const messages = all();
    return { messages, tokens: total(), truncated: sys !== system || sum_ !== summary || msgs.some((m, i) => m !== turn[i]) };
  };

  const results = msgs
    .map((m, i) => ({ m, i }))
    .filter(({ m }) => m.role === "tool")
    .sort((a, b) => (b.m.content?.length ?? 0) - (a.m.content?.length ?? 0) || a.i - b.i);
  for (const { i } of results) {
    if (total() <= limit) return done();
    msgs[i] = shortened(itemAt(msgs, i), chars);
  }
  // Arguments are cut only whole: a provider may parse them, so they stay valid JSON.
  for (let i = 0; i < msgs.length && total() > limit; i++) {
    const m = itemAt(msgs, i);
    if (m.tool_calls?.some((c) => c.function.arguments.length > 200)) {
      msgs[i] = {
        ...m,
        tool_calls: m.tool_calls.map((c) =>
          c.function.arguments.length > 200 ? { ...c, function: { name: c.function.name, arguments: '{"truncated":true}' } } : c,
        ),
      };
    }
  }
  for (;;) {
    const over = total() - limit;
    if (over <= 0) return done();
    const at = largestText(counter, msgs);
    if (at < 0) break;
    msgs[at] = cutBy(counter, itemAt(msgs, at), over);
  }
  if (total() > limit) sum_ = null;
  const over = total() - limit;
  if (over > 0) sys = cutBy(counter, sys, over);
  return done();
}

/** Index of the message with the most tokens whose content can still be cut, or -1. */
function largestText(counter: TokenCounter, msgs: readonly ChatMessage[]): number {
  let best = -1;
  let most = 0;
  msgs.forEach((m, i) => {
    const n = messageTokens(counter, m);
    if (n > most && (m.content?.length ?? 0) > TRUNCATED.length) {
      best = i;
      most = n;
    }
  });
  return best;
}

/** The message with its content cut by at least `over` estimated tokens (or to the marker alone). */
function cutBy(counter: TokenCounter, m: ChatMessage, over: number): ChatMessage {
  const content = m.content ?? "";
  // Counts are memoised per message: a huge paste is not counted again just to be cut.
  const contentTokens = messageTokens(counter, m) - messageTokens(counter, { ...m, content: null });
  const target = contentTokens - Math.ceil(over / 1.1) - 1;
  const cut = target > 0 ? truncateToTokens(counter, content, target, TRUNCATED) : "";
  return { ...m, content: cut || TRUNCATED.trim() };
}

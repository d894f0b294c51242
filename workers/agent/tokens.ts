import type { ChatMessage, ToolSchema } from "./types.ts";

/**
 * Counts the tokens of plain text: an estimate from its characters ({@link estimateTokens}),
 * scaled by `ratio`, which a session calibrates from the tokens its provider reports
 * ({@link calibratedRatio}). A counter never changes: a new ratio is a new counter, so the
 * per-message counts memoised below stay valid.
 */
export interface TokenCounter {
  /** What the static estimate is multiplied by (1: uncalibrated). */
  readonly ratio: number;
  count(text: string): number;
}

/** Tokens every message costs beyond its content (`<|im_start|>`, role, separator, `<|im_end|>`), as OpenAI counts them. */
export const MESSAGE_OVERHEAD = 3;
/** Tokens that prime the reply (`<|im_start|>assistant<|im_sep|>`). */
export const REPLY_PRIMING = 3;
/** Per tool call: its framing (type, separators), beyond its id, name and arguments. */
export const TOOL_CALL_OVERHEAD = 8;
/** Per tool schema offered to the model, beyond its JSON. */
export const TOOL_SCHEMA_OVERHEAD = 9;
/** Safety margin on every estimate: a calibrated ratio is an average, and one request's text differs from another's. */
export const ESTIMATE_FACTOR = 1.1;
export const ESTIMATE_CONSTANT = 16;

const isAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * Tokens of `text` estimated from its characters, on the safe side of OpenAI's tokenizers
 * (cl100k_base, o200k_base): measured about 1.3-1.5x their count for English prose, code
 * and JSON, 1.1x for German, 1.6-2x for Japanese, Chinese and Russian, and never below them
 * for random identifiers, hashes and base64 (docs/context.md). The text is read as the
 * pieces byte-pair tokenizers merge within: runs of ASCII letters and digits, runs of spaces,
 * of line breaks, single symbols, letters of the alphabetic scripts of Europe and the Middle
 * East, CJK characters, other code points. One pass over its UTF-16 units.
 */
export function estimateTokens(text: string): number {
  let n = 0;
  const len = text.length;
  for (let i = 0; i < len; ) {
    const c = text.charCodeAt(i);
    let j = i + 1;
    if (isAlnum(c)) {
      while (j < len && isAlnum(text.charCodeAt(j))) j++;
      n += alnumTokens(text, i, j);
    } else if (c === 32 || c === 9) {
      while (j < len && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9)) j++;
      // One space joins the word after it, but not a number.
      n += j - i === 1 && c === 32 ? (isDigit(text.charCodeAt(j)) ? 1 : 0) : 1 + Math.floor((j - i) / 16);
    } else if (c === 10 || c === 13) {
      while (j < len && (text.charCodeAt(j) === 10 || text.charCodeAt(j) === 13)) j++;
      n += 1 + Math.floor((j - i) / 16);
    } else if (c <= 0x6ff) {
      n += 1; // a symbol (merges only make fewer); a letter of accented Latin, Greek, Cyrillic, Hebrew, Arabic
    } else if (c >= 0xd800 && c <= 0xdbff && j < len && text.charCodeAt(j) >= 0xdc00 && text.charCodeAt(j) <= 0xdfff) {
      j++;
      n += 3; // emoji and other astral characters: four bytes, several tokens
    } else if (c >= 0x3040 && c <= 0xfaff && (c < 0xd800 || c > 0xdfff)) {
      n += 1.5; // a CJK character: one token, rarer ones two or three
    } else {
      n += 2; // any other character (and a lone surrogate)
    }
    i = j;
  }
  return Math.ceil(n);
}

/** The run of ASCII letters and digits text[from, to): words of up to 6 letters are one token; numbers go in threes; identifiers and hashes are dense. */
function alnumTokens(text: string, from: number, to: number): number {
  const length = to - from;
  let digits = 0;
  let upper = 0; // capitals after the first character: each tends to start a token
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c <= 57) digits++;
    else if (c <= 90 && i > from) upper++;
  }
  if (digits === length) return Math.ceil(length / 3);
  if (digits > 0) return Math.ceil(length * 0.6) + Math.ceil(upper / 2);
  return (length <= 6 ? 1 : Math.ceil(length / 4)) + upper;
}

/** A counter of estimated tokens times `ratio` (1: the estimate alone, on the safe side). */
export function estimatingCounter(ratio = 1): TokenCounter {
  return { ratio, count: ratio === 1 ? estimateTokens : (text) => Math.ceil(estimateTokens(text) * ratio) };
}

/** The uncalibrated counter: what a session counts with until its provider reported usage. */
export const ESTIMATE: TokenCounter = estimatingCounter();

/** Bounds of a calibrated ratio: a provider's report that far off the estimate is not about the same text. */
export const MIN_RATIO = 0.25;
export const MAX_RATIO = 4;
/** Calibrations kept: the ratio is the largest of the last few, so one light turn does not loosen it. */
export const CALIBRATIONS_KEPT = 4;

/**
 * The ratio after one more observation: `reported` input tokens (the provider's usage) of
 * requests this code estimated at `estimated` tokens (uncalibrated, without margin). The
 * largest of the last {@link CALIBRATIONS_KEPT} observations, within the bounds; `kept` is
 * updated in place.
 */
export function calibratedRatio(kept: number[], reported: number, estimated: number): number {
  if (reported > 0 && estimated > 0) {
    kept.push(Math.min(MAX_RATIO, Math.max(MIN_RATIO, reported / estimated)));
    if (kept.length > CALIBRATIONS_KEPT) kept.shift();
  }
  return kept.length > 0 ? Math.max(...kept) : 1;
}

// Counts are memoised per message object. Messages are never mutated in this code base
// (repair and the planner copy), so a count stays valid as long as its message lives.
const memo = new WeakMap<TokenCounter, WeakMap<ChatMessage, number>>();

/** Raw tokens of one message: overhead, role, content, name, tool calls (id, name, arguments), tool call id. No margin. */
export function messageTokens(counter: TokenCounter, m: ChatMessage): number {
  let byMessage = memo.get(counter);
  if (!byMessage) memo.set(counter, (byMessage = new WeakMap()));
  const known = byMessage.get(m);
  if (known !== undefined) return known;
  let n = MESSAGE_OVERHEAD + counter.count(m.role);
  if (m.content) n += counter.count(m.content);
  if (m.name) n += counter.count(m.name) + 1;
  if (m.tool_call_id) n += counter.count(m.tool_call_id) + 1;
  for (const call of m.tool_calls ?? []) {
    n += TOOL_CALL_OVERHEAD + counter.count(call.id) + counter.count(call.function.name) + counter.count(call.function.arguments);
  }
  byMessage.set(m, n);
  return n;
}

/** Raw tokens of a whole request (messages, tool schemas, reply priming). No margin. */
export function requestTokens(counter: TokenCounter, messages: readonly ChatMessage[], tools?: readonly ToolSchema[]): number {
  let raw = REPLY_PRIMING + toolsTokens(counter, tools);
  for (const m of messages) raw += messageTokens(counter, m);
  return raw;
}

/** Raw tokens of the tool schemas offered with a request. No margin. */
export function toolsTokens(counter: TokenCounter, tools: readonly ToolSchema[] | undefined): number {
  let n = 0;
  for (const t of tools ?? []) n += TOOL_SCHEMA_OVERHEAD + counter.count(JSON.stringify(t.function));
  return n;
}

/** Adds the safety margin to a raw count. */
export function withMargin(raw: number): number {
  return Math.ceil(raw * ESTIMATE_FACTOR) + ESTIMATE_CONSTANT;
}

/**
 * Estimated tokens of a whole request (messages, tool schemas, reply priming) with the
 * safety margin (10% and a few tokens over `counter`'s count).
 */
export function estimateRequestTokens(counter: TokenCounter, messages: readonly ChatMessage[], tools?: readonly ToolSchema[]): number {
  return withMargin(requestTokens(counter, messages, tools));
}

/**
 * The longest head of `text` that, with `marker` appended, counts at most `maxTokens`
 * (binary search over characters, never splitting a surrogate pair). Returns `text`
 * itself when it already fits, and the marker alone (or "") when nothing of it fits.
 */
export function truncateToTokens(counter: TokenCounter, text: string, maxTokens: number, marker = ""): string {
  const fits = (chars: number) => counter.count(headOf(text, chars) + marker) <= maxTokens;
  let lo = 0; // chars known to fit
  let hi = text.length + 1; // chars known not to fit (past the end: not known yet)
  // Gallop from a guess of a few characters per token, so that a huge text is never
  // counted whole, not even once.
  for (let probe = Math.max(64, maxTokens * 6); probe < text.length; probe *= 2) {
    if (!fits(probe)) {
      hi = probe;
      break;
    }
    lo = probe;
  }
  if (hi > text.length) {
    if (counter.count(text) <= maxTokens) return text;
    hi = text.length;
  }
  if (lo === 0 && counter.count(marker) > maxTokens) return "";
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return headOf(text, lo) + marker;
}

function headOf(text: string, chars: number): string {
  return text.slice(0, cutAt(text, chars));
}

/** `at`, or one less when a cut there would split a surrogate pair. */
function cutAt(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff && at < text.length ? at - 1 : at;
}

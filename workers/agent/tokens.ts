import type { ChatMessage, ToolSchema } from "./types.ts";

/** Counts the tokens of plain text with one tokenizer encoding. */
export interface TokenCounter {
  /** Encoding name, e.g. "cl100k_base". */
  readonly encoding: string;
  count(text: string): number;
}

/**
 * The encoding used for estimates. cl100k_base is the smallest of the modern encodings
 * (about 0.45 MiB gzipped in the Worker bundle, against about 1.1 MiB for o200k_base). For
 * English, code and JSON it counts within about 1% of o200k_base (gpt-4o and later), which
 * the estimate's 10% margin covers; for other languages it counts more, the safe side
 * (docs/context.md).
 */
export const TOKEN_ENCODING = "cl100k_base";

/** Tokens every message costs beyond its content (`<|im_start|>`, role, separator, `<|im_end|>`), as OpenAI counts them. */
export const MESSAGE_OVERHEAD = 3;
/** Tokens that prime the reply (`<|im_start|>assistant<|im_sep|>`). */
export const REPLY_PRIMING = 3;
/** Per tool call: its framing (type, separators), beyond its id, name and arguments. */
export const TOOL_CALL_OVERHEAD = 8;
/** Per tool schema offered to the model, beyond its JSON. */
export const TOOL_SCHEMA_OVERHEAD = 9;
/** Safety margin on every estimate: provider tokenizers differ from ours, and concatenation shifts merges. */
export const ESTIMATE_FACTOR = 1.1;
export const ESTIMATE_CONSTANT = 16;

let loading: Promise<TokenCounter> | null = null;

/**
 * Loads the tokenizer once per isolate. The import is dynamic so that the rank table
 * (about 100k entries) is built on first use, not at Worker start-up, where webhooks
 * that never count tokens would pay for it.
 */
export function loadTokenCounter(): Promise<TokenCounter> {
  loading ??= (async () => {
    const [{ GptEncoding }, ranks] = await Promise.all([import("gpt-tokenizer/GptEncoding"), import("gpt-tokenizer/bpeRanks/cl100k_base")]);
    const api = GptEncoding.getEncodingApi(TOKEN_ENCODING, () => ranks.default);
    // Text containing "<|endoftext|>" and the like comes from users and web pages: it is
    // counted as the plain text it is, never as (or rejected for being) a special token.
    const asText = { disallowedSpecial: new Set<string>() };
    const exact = (text: string) => (text === "" ? 0 : api.countTokens(text, asText));
    return { encoding: TOKEN_ENCODING, count: (text: string) => countInRuns(text, exact) };
  })().catch((err: unknown) => {
    loading = null; // a later call may retry
    throw err;
  });
  return loading;
}

/** Longest run without whitespace that is counted in one piece. */
const RUN_CHARS = 128;
const LONG_RUN = new RegExp(`\\S{${RUN_CHARS + 1},}`, "g");

/**
 * Counts `text`, cutting runs of non-space characters longer than `RUN_CHARS` into pieces.
 * Byte-pair merging is quadratic in the length of one pre-token, and a pasted run of
 * 40,000 letters or Han characters would take seconds of CPU in one piece; in pieces it
 * counts the same or a token more per piece, which errs on the safe side.
 */
function countInRuns(text: string, exact: (text: string) => number): number {
  let n = 0;
  let last = 0;
  for (const m of text.matchAll(LONG_RUN)) {
    n += exact(text.slice(last, m.index));
    for (let i = 0; i < m[0].length; ) {
      const end = cutAt(m[0], i + RUN_CHARS);
      n += exact(m[0].slice(i, end));
      i = end;
    }
    last = m.index + m[0].length;
  }
  return n + exact(last === 0 ? text : text.slice(last));
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
 * safety margin: never below what the tokenizer counts for the same content, and about
 * 10% above it.
 */
export function estimateRequestTokens(counter: TokenCounter, messages: readonly ChatMessage[], tools?: readonly ToolSchema[]): number {
  let raw = REPLY_PRIMING + toolsTokens(counter, tools);
  for (const m of messages) raw += messageTokens(counter, m);
  return withMargin(raw);
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

import { itemAt } from "./item-at.ts";

/** How to complete the inline Markdown at the end of a streaming reply. */
export interface TailFix {
  /** The source with half-typed markers removed (an unfinished link keeps only its label). */
  text: string;
  /** What closes the constructs still open at its end (code span, then emphasis). */
  closers: string;
  /** `text` with the unmatched emphasis openers removed instead, plus the code closer. */
  fallback: string;
}

interface Opener {
  ch: string;
  pos: number;
  left: number;
  orig: number;
  canClose: boolean;
}

const WS = /\s/u;
const PUNCT = /[\p{P}\p{S}]/u;
const AUTOLINK = /<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>/y;
/** A `<` starting an autolink or tag that is still being typed (nothing after it). */
const UNFINISHED_TAG = /<(?:\/?[A-Za-z][\w+.:/?#@&=%~-]*)?$/y;
/** Openers searched back for a closer; CommonMark's unbounded search is quadratic. */
const SEARCH = 64;

const isWs = (c: string | undefined) => c === undefined || WS.test(c);
const isPunct = (c: string | undefined) => c !== undefined && PUNCT.test(c);

function charBefore(s: string, i: number): string | undefined {
  if (i <= 0) return undefined;
  const low = s.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && i >= 2 ? s.slice(i - 2, i) : s[i - 1];
}

function charAt(s: string, i: number): string | undefined {
  const cp = s.codePointAt(i);
  return cp === undefined ? undefined : String.fromCodePoint(cp);
}

function runLength(s: string, i: number, ch: string): number {
  let j = i;
  while (s[j] === ch) j++;
  return j - i;
}

/** Start of the next backtick run of exactly `len` from `from`, or -1. */
function backtickRun(s: string, from: number, len: number): number {
  for (let i = s.indexOf("`", from); i >= 0; i = s.indexOf("`", i)) {
    const n = runLength(s, i, "`");
    if (n === len) return i;
    i += n;
  }
  return -1;
}

/** Index of the `)` ending a link destination that starts at `from`, or -1. */
function destinationEnd(s: string, from: number): number {
  let depth = 0;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") i++;
    else if (c === "(") depth++;
    else if (c === ")" && depth-- === 0) return i;
  }
  return -1;
}

/**
 * Scans the inline source at the end of a streaming reply, left to right with CommonMark's
 * flanking rules, and says how to make it look finished: an open code span is closed, open
 * emphasis and strikethrough are closed in reverse order, an unfinished link or image shows
 * its label, an unmatched `[` is hidden, and a marker run typed at the very end (not closing
 * anything yet) is hidden.
 */
export function scanTail(s: string): TailFix {
  const openers: Opener[] = [];
  const brackets: { pos: number; image: boolean }[] = [];
  const removed = new Set<number>();
  let cut = s.length;
  let code: { pos: number; len: number } | null = null;
  let lastRun: { pos: number; end: number; closed: boolean } | null = null;
  let i = 0;
  scan: while (i < s.length) {
    const c = s.charAt(i);
    if (c === "\\") {
      i += 2;
    } else if (c === "`") {
      const len = runLength(s, i, "`");
      const close = backtickRun(s, i + len, len);
      if (close < 0) {
        code = { pos: i, len };
        break;
      }
      i = close + len;
    } else if (c === "<") {
      AUTOLINK.lastIndex = i;
      UNFINISHED_TAG.lastIndex = i;
      if (AUTOLINK.test(s)) i = AUTOLINK.lastIndex;
      // "x<y" is a comparison, not a tag: only a "<" after a space or punctuation may start one.
      else if (!/[\p{L}\p{N}]/u.test(charBefore(s, i) ?? " ") && UNFINISHED_TAG.test(s)) {
        cut = i;
        break;
      } else i++;
    } else if (c === "[" || (c === "!" && s[i + 1] === "[")) {
      brackets.push({ pos: i, image: c === "!" });
      i += c === "!" ? 2 : 1;
    } else if (c === "]") {
      const b = brackets.pop();
      const after = s[i + 1];
      const refEnd = after === "[" ? s.indexOf("]", i + 2) : -1;
      const destEnd = after === "(" ? destinationEnd(s, i + 2) : -1;
      if (b && (after === undefined || (after === "(" && destEnd < 0) || (after === "[" && refEnd < 0))) {
        removed.add(b.pos);
        if (b.image) removed.add(b.pos + 1);
        cut = i;
        break;
      }
      i = destEnd >= 0 ? destEnd + 1 : refEnd >= 0 ? refEnd + 1 : i + 1;
    } else if (c === "*" || c === "_" || c === "~") {
      const len = runLength(s, i, c);
      lastRun = { pos: i, end: i + len, closed: delimiterRun(s, i, len, openers) };
      i += len;
    } else i++;
  }
  for (const b of brackets) {
    removed.add(b.pos);
    if (b.image) removed.add(b.pos + 1);
  }
  const end = s.trimEnd().length;
  if (code && s.slice(code.pos + code.len).trim() === "") {
    cut = Math.min(cut, code.pos);
    code = null;
  }
  if (code === null && lastRun && lastRun.end === end && !lastRun.closed) cut = Math.min(cut, lastRun.pos);
  if (s[end - 1] === "\\" && code === null) cut = Math.min(cut, end - 1);
  const open = openers.filter((o) => o.pos < cut && o.pos + o.left <= cut);
  const keep = (drop: Set<number>) => {
    let out = "";
    let from = 0;
    for (const p of [...drop].filter((p) => p < cut).sort((a, b) => a - b)) {
      out += s.slice(from, p);
      from = p + 1;
    }
    out += s.slice(from, cut);
    return code ? out : out.trimEnd();
  };
  const text = keep(removed);
  const withoutOpeners = new Set(removed);
  for (const o of open) for (let p = o.pos; p < o.pos + o.left; p++) withoutOpeners.add(p);
  const codeCloser = code ? (text.endsWith("`") ? " " : "") + "`".repeat(code.len) : "";
  const closers =
    codeCloser +
    open
      .reverse()
      .map((o) => o.ch.repeat(o.left))
      .join("");
  return { text, closers, fallback: keep(withoutOpeners) + codeCloser };
}

/** Matches a run of `*`, `_` or `~` against open runs; returns whether it closed any. */
function delimiterRun(s: string, i: number, len: number, openers: Opener[]): boolean {
  const ch = s.charAt(i);
  const prev = charBefore(s, i);
  const next = charAt(s, i + len);
  const left = !isWs(next) && (!isPunct(next) || isWs(prev) || isPunct(prev));
  const right = !isWs(prev) && (!isPunct(prev) || isWs(next) || isPunct(next));
  const canOpen = ch === "_" ? left && (!right || isPunct(prev)) : left;
  const canClose = ch === "_" ? right && (!left || isPunct(next)) : right;
  if (ch === "~" && len < 2) return false;
  let remaining = len;
  if (canClose) {
    for (let d = openers.length - 1; d >= 0 && remaining > 0 && openers.length - d <= SEARCH; d--) {
      const o = itemAt(openers, d);
      if (o.ch !== ch) continue;
      if (ch === "~" && (o.left < 2 || remaining < 2)) continue;
      if (ch !== "~" && (o.canClose || canOpen) && (o.orig + len) % 3 === 0 && !(o.orig % 3 === 0 && len % 3 === 0)) continue;
      const use = ch === "~" || (o.left >= 2 && remaining >= 2) ? 2 : 1;
      o.left -= use;
      remaining -= use;
      // Openers between this one and the closer can no longer be closed.
      openers.length = o.left > 0 ? d + 1 : d;
      d = openers.length;
    }
  }
  if (remaining > 0 && canOpen) openers.push({ ch, pos: i, left: remaining, orig: len, canClose });
  return remaining < len;
}

import { itemAt } from "./item-at.ts";
import { BOLD, CODE, ITALIC, STRIKE, type Line, type Span } from "./ir.ts";
import { nest, type Range } from "./nest.ts";
import type { Piece } from "./writer.ts";

/** What differs between the Markdown-like dialects (Slack mrkdwn, Discord Markdown). */
export interface MarkerStyle {
  bold: string;
  italic: string;
  strike: string;
  /** Escapes visible text; `atLineStart` when nothing but whitespace precedes it on the line. */
  text(s: string, atLineStart: boolean): string;
  /** A URL written bare (the platform links it). */
  bare(s: string): string;
  /** Inline code, or null when the text cannot be written as code (then it is plain text). */
  code(s: string): string | null;
  link(label: string, url: string): string;
  /** Line prefix of a quoted line. */
  quote(blank: boolean): string;
  /** Prefix for a top-level heading, or null to write it bold. */
  heading(level: number): string | null;
  /** Slack: markers only take effect at word boundaries, so intraword styles are dropped. */
  wordBoundaries: boolean;
}

type Cell = { kind: "text" | "bare" | "code"; text: string; marks: number } | { kind: "link"; text: string; marks: number; url: string };

/** Links and code become single cells (their insides carry no markers). */
function cellsOf(spans: readonly Span[]): Cell[] {
  const cells: Cell[] = [];
  for (const s of spans) {
    const last = cells[cells.length - 1];
    if (s.link && last?.kind === "link" && last.url === s.link) {
      last.text += s.text;
      last.marks &= s.marks & ~CODE;
    } else if (s.link) cells.push({ kind: "link", text: s.text, marks: s.marks & ~CODE, url: s.link });
    else if (s.marks & CODE) cells.push({ kind: "code", text: s.text, marks: s.marks & ~CODE });
    else cells.push({ kind: s.bare ? "bare" : "text", text: s.text, marks: s.marks });
  }
  return cells;
}

const KEYS: [number, "b" | "i" | "s"][] = [
  [BOLD, "b"],
  [ITALIC, "i"],
  [STRIKE, "s"],
];
const SPACE = /[ \t]/;
const WORD = /[\p{L}\p{N}]/u;

/** Serialises one line with properly nested, balanced markers. */
export function markerLine(line: Line, style: MarkerStyle): Piece {
  let spans = line.spans;
  let out = line.quote ? style.quote(line.spans.length === 0 && line.prefix === "") : "";
  const headingPrefix = line.heading > 0 ? style.heading(line.heading) : null;
  if (line.heading > 0 && headingPrefix === null) spans = spans.map((s) => ({ ...s, marks: s.marks | BOLD }));
  if (headingPrefix) out += headingPrefix;
  const cells = cellsOf(spans);
  const visible = cells.map((c) => c.text).join("");
  const ranges = adjust(
    nest(cells.map((c) => ({ len: c.text.length, keys: KEYS.filter(([bit]) => c.marks & bit).map(([, k]) => k) }))),
    visible,
    atomicAt(cells),
    style,
  );
  const opens = new Map<number, Range[]>();
  const closes = new Map<number, Range[]>();
  for (const r of ranges) {
    bucket(opens, r.start).push(r);
    bucket(closes, r.end).unshift(r);
  }
  const marker = (r: Range) => (r.key === "b" ? style.bold : r.key === "i" ? style.italic : style.strike);
  let blankSoFar = headingPrefix === null;
  const write = (s: string) => {
    if (s === "") return;
    out += style.text(s, blankSoFar);
    if (s.trim() !== "") blankSoFar = false;
  };
  const events = (at: number) => {
    const c = closes.get(at) ?? [];
    const o = opens.get(at) ?? [];
    for (const r of c) out += marker(r);
    // A closing marker straight before an opening one would fuse ("**a***b*"): keep them apart.
    if (c.length > 0 && o.length > 0) out += "\u200b";
    for (const r of o) out += marker(r);
    if (c.length + o.length > 0) blankSoFar = false;
  };
  write(line.prefix);
  let pos = 0;
  for (const cell of cells) {
    const end = pos + cell.text.length;
    if (cell.kind === "code" || cell.kind === "link") {
      events(pos);
      const code = cell.kind === "code" ? style.code(cell.text) : null;
      if (cell.kind === "link") out += style.link(cell.text, cell.url);
      else if (code !== null) out += code;
      else write(cell.text);
      blankSoFar = false;
      pos = end;
      continue;
    }
    let from = pos;
    for (let at = pos; at < end; at++) {
      if (at > from && (opens.has(at) || closes.has(at))) {
        emitText(cell, visible.slice(from, at));
        from = at;
      }
      if (at === from) events(at);
    }
    emitText(cell, visible.slice(from, end));
    pos = end;
  }
  events(pos);
  return { text: out, entities: [] };

  function emitText(cell: Cell, s: string) {
    if (cell.kind === "bare") {
      out += style.bare(s);
      if (s !== "") blankSoFar = false;
    } else write(s);
  }
}

/**
 * Markers must hug text: a range's outer whitespace moves outside it, an all-space range is
 * dropped, and (Slack) a range touching a letter or digit outside it is dropped.
 */
function adjust(ranges: Range[], visible: string, atomic: (at: number) => boolean, style: MarkerStyle): Range[] {
  const out: Range[] = [];
  for (const r of ranges) {
    let { start, end } = r;
    while (start < end && SPACE.test(visible.charAt(start)) && !atomic(start)) start++;
    while (end > start && SPACE.test(visible.charAt(end - 1)) && !atomic(end - 1)) end--;
    if (start === end) continue;
    if (style.wordBoundaries && (isWordBefore(visible, start) || isWordAt(visible, end))) continue;
    out.push({ ...r, start, end });
  }
  return out;
}

/** Whether an offset lies in a code or link cell (which markers must not cut into). */
function atomicAt(cells: readonly Cell[]): (at: number) => boolean {
  const starts: number[] = [];
  let offset = 0;
  for (const c of cells) {
    starts.push(offset);
    offset += c.text.length;
  }
  return (pos) => {
    let lo = 0;
    let hi = cells.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (itemAt(starts, mid) <= pos) lo = mid;
      else hi = mid - 1;
    }
    const kind = cells[lo]?.kind;
    return kind === "code" || kind === "link";
  };
}

function isWordBefore(s: string, offset: number): boolean {
  if (offset <= 0) return false;
  const low = s.charCodeAt(offset - 1);
  const from = low >= 0xdc00 && low <= 0xdfff && offset >= 2 ? offset - 2 : offset - 1;
  return isWordCodePoint(s.codePointAt(from));
}

function isWordAt(s: string, offset: number): boolean {
  return isWordCodePoint(s.codePointAt(offset));
}

/** `undefined` (an offset past the end) is no word. */
function isWordCodePoint(cp: number | undefined): boolean {
  return cp !== undefined && WORD.test(String.fromCodePoint(cp));
}

/** The list under `key`, created empty on first use. */
function bucket(map: Map<number, Range[]>, key: number): Range[] {
  let list = map.get(key);
  if (list === undefined) map.set(key, (list = []));
  return list;
}

import { itemAt } from "./item-at.ts";
import { lineText, sliceLine, type Block, type Line, type Span } from "./ir.ts";
import { codePointCuts, graphemeCuts, measure, reach } from "./measure.ts";
import type { LengthUnit } from "./types.ts";
import { BLOCK_SEP, LINE_SEP, type Writer } from "./writer.ts";

/** Measures serialised pieces, caching per line. */
class Meter {
  readonly #lines = new WeakMap<Line, number>();
  readonly w: Writer;
  readonly unit: LengthUnit;
  constructor(w: Writer, unit: LengthUnit) {
    this.w = w;
    this.unit = unit;
  }
  text(s: string): number {
    return measure(s, this.unit);
  }
  line(l: Line): number {
    let n = this.#lines.get(l);
    if (n === undefined) this.#lines.set(l, (n = this.text(this.w.line(l).text)));
    return n;
  }
  /**
   * The line's length, or a lower bound above `cap` when that proves it is longer: written
   * text is never shorter than the visible text, so a long rest of a line is not serialised
   * again for every part cut from it.
   */
  lineOver(l: Line, cap: number): number {
    const known = this.#lines.get(l);
    if (known !== undefined) return known;
    let visible = l.prefix.length;
    for (const s of l.spans) visible += s.text.length;
    const floor = this.unit === "utf16" ? visible : Math.ceil(visible / 2);
    return floor > cap ? floor : this.line(l);
  }
  frame(lang: string): number {
    const f = this.w.codeFrame(lang);
    return this.text(f.open) + this.text(f.close);
  }
  codeLine(s: string): number {
    return this.text(this.w.codeLine(s));
  }
  /** Like {@link lineOver}, for a line of code. */
  codeLineOver(s: string, cap: number): number {
    const floor = this.unit === "utf16" ? s.length : Math.ceil(s.length / 2);
    return floor > cap ? floor : this.codeLine(s);
  }
  /** Length of a whole block, or some number above `cap` once it is known to exceed it. */
  block(b: Block, cap: number): number {
    const nl = this.text(LINE_SEP);
    let n = b.kind === "code" ? this.frame(b.lang) : 0;
    for (let i = 0; i < b.lines.length && n <= cap; i++) {
      n += (i > 0 ? nl : 0) + (b.kind === "code" ? this.codeLineOver(itemAt(b.lines, i), cap) : this.lineOver(itemAt(b.lines, i), cap));
    }
    return n;
  }
}

interface Cut<T> {
  head: T;
  rest: T | null;
}

/**
 * Packs blocks into parts of at most `limit` units: whole blocks first; a block that does not
 * fit is split between lines, a line between words, a word between grapheme clusters (and a
 * cluster longer than a part between code points). A code block split in two is closed and
 * reopened with its language, since each part is written on its own. Whitespace at a cut is
 * dropped (the blank line, line break or spaces there); nothing else is lost or repeated.
 */
export function splitBlocks(blocks: readonly Block[], w: Writer, limit: number, unit: LengthUnit): Block[][] {
  const m = new Meter(w, unit);
  const sep = m.text(BLOCK_SEP);
  const parts: Block[][] = [];
  let cur: Block[] = [];
  let used = 0;
  const flush = () => {
    parts.push(cur);
    cur = [];
    used = 0;
  };
  let next = 0;
  let pending: Block | null = null;
  while (pending !== null || next < blocks.length) {
    const block: Block = pending ?? itemAt(blocks, next++);
    pending = null;
    const cost = m.block(block, limit);
    const gap = cur.length > 0 ? sep : 0;
    if (used + gap + cost <= limit) {
      cur.push(block);
      used += gap + cost;
      continue;
    }
    const room = limit - used - gap;
    // Start a fresh part for a block that fits one, or when too little room is left to fill.
    if (cur.length > 0 && (cost <= limit || room < limit / 3)) {
      flush();
      pending = block;
      continue;
    }
    const cut = takeBlock(block, cur.length > 0 ? room : limit, m, cur.length === 0);
    if (cut === null) {
      flush();
      pending = block;
      continue;
    }
    cur.push(cut.head);
    flush();
    pending = cut.rest;
  }
  if (cur.length > 0 || parts.length === 0) flush();
  return parts;
}

/** The largest head of `block` within `budget`; `fresh` (an empty part) never fails. */
function takeBlock(block: Block, budget: number, m: Meter, fresh: boolean): Cut<Block> | null {
  return block.kind === "code" ? takeCode(block, budget, m, fresh) : takeLines(block.lines, budget, m, fresh);
}

function takeLines(lines: readonly Line[], budget: number, m: Meter, fresh: boolean): Cut<Block> | null {
  const nl = m.text(LINE_SEP);
  let used = 0;
  let n = 0;
  while (n < lines.length) {
    const c = m.lineOver(itemAt(lines, n), budget) + (n > 0 ? nl : 0);
    if (used + c > budget) break;
    used += c;
    n++;
  }
  const make = (head: Line[], rest: Line[]): Cut<Block> => {
    const r = trimBlank(rest);
    return { head: { kind: "lines", lines: trimBlank(head) }, rest: r.length > 0 ? { kind: "lines", lines: r } : null };
  };
  // Between lines when that fills at least half the part; otherwise fill it with words of the next line.
  if (n > 0 && used >= budget / 2) return make(lines.slice(0, n), lines.slice(n));
  const room = budget - used - (n > 0 ? nl : 0);
  const line = lines[n];
  if (line && room > 0) {
    const cut = splitLine(line, room, m, n > 0, fresh && n === 0);
    if (cut) return make([...lines.slice(0, n), cut.head], cut.rest ? [cut.rest, ...lines.slice(n + 1)] : lines.slice(n + 1));
  }
  if (n > 0) return make(lines.slice(0, n), lines.slice(n));
  if (!fresh || !line) return null;
  // Unreachable with limit >= MIN_LIMIT; kept so a part can never come out empty: one code
  // point, unstyled, always fits.
  const text = lineText(line);
  const first = text.codePointAt(0);
  if (first === undefined) throw new RangeError("an empty line has nothing to cut");
  const one = String.fromCodePoint(first);
  const head: Line = { prefix: "", spans: [{ text: one, marks: 0 }], quote: false, heading: 0 };
  const rest = sliceLine(line, one.length, text.length);
  return make([head], lineText(rest) === "" ? lines.slice(1) : [rest, ...lines.slice(1)]);
}

const BREAKABLE = /[ \t\u3000]/;

/** Binary search for the largest candidate cut whose head fits (heads grow with the cut). */
function largest(cands: readonly number[], fits: (at: number) => boolean): number | null {
  let lo = 0;
  let hi = cands.length - 1;
  let best: number | null = null;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const cand = itemAt(cands, mid);
    if (fits(cand)) {
      best = cand;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/** Splits one line: at spaces (the run is dropped), else between graphemes; links stay whole if possible. */
function splitLine(line: Line, room: number, m: Meter, wordsOnly: boolean, fresh: boolean): Cut<Line> | null {
  const text = lineText(line);
  // Written text is never shorter than the visible text, which bounds where a cut can be.
  const window = Math.min(text.length, reach(text, room, m.unit) + 1);
  const inLink = linkInteriors(line, window);
  const fits = (at: number) => m.line(sliceLine(line, 0, at)) <= room;
  const bounds = new Set(graphemeCuts(text, window + 1));
  const words: [number, number][] = [];
  // Never cut inside the list marker: a part must not end in a lone bullet.
  for (let i = line.prefix.length + 1; i < window; i++) {
    if (!BREAKABLE.test(text.charAt(i)) || BREAKABLE.test(text.charAt(i - 1)) || inLink.has(i) || !bounds.has(i)) continue;
    let e = i;
    while (e < text.length && BREAKABLE.test(text.charAt(e))) e++;
    if (e === text.length || bounds.has(e) || e >= window) words.push([i, e]);
  }
  const wordEnd = new Map(words);
  const word = largest(
    words.map(([s]) => s),
    fits,
  );
  const rest = (from: number) => (from >= text.length ? null : sliceLine(line, from, text.length));
  if (word !== null && (wordsOnly || m.line(sliceLine(line, 0, word)) >= room / 2)) {
    const end = wordEnd.get(word);
    if (end === undefined) throw new RangeError(`the cut at ${word} is no word's start`);
    return { head: sliceLine(line, 0, word), rest: rest(end) };
  }
  if (wordsOnly) return null;
  const hard =
    largest(
      [...bounds].filter((at) => at <= window && at > line.prefix.length && !inLink.has(at)),
      fits,
    ) ??
    (fresh
      ? largest(
          codePointCuts(text, window).filter((at) => !inLink.has(at)),
          fits,
        )
      : null);
  if (hard !== null) {
    // A cut next to spaces is a cut between words after all: drop the spaces, as there.
    let a = hard;
    let b = hard;
    while (a > line.prefix.length + 1 && BREAKABLE.test(text.charAt(a - 1))) a--;
    while (b < text.length && BREAKABLE.test(text.charAt(b))) b++;
    const clean = (a < hard || b > hard) && a > line.prefix.length && (b >= window || bounds.has(b) || b === text.length) && fits(a);
    return clean ? { head: sliceLine(line, 0, a), rest: rest(b) } : { head: sliceLine(line, 0, hard), rest: rest(hard) };
  }
  if (!fresh) return null;
  // Nothing fits with formatting: a link too long for a part is written as `label (url)`,
  // and as a last resort the head is written without styles.
  if (line.spans.some((s) => s.link)) return splitLine(unlink(line), room, m, false, true);
  if (line.heading > 0 || line.spans.some((s) => s.marks !== 0)) {
    const bare: Line = { ...line, heading: 0, spans: line.spans.map((s) => ({ ...s, marks: 0 })) };
    const cut = splitLine(bare, room, m, false, true);
    if (cut) return { head: cut.head, rest: cut.rest ? sliceLine(line, text.length - lineText(cut.rest).length, text.length) : null };
  }
  return null;
}

/** Offsets strictly inside a link's label (cutting there would split the link). */
function linkInteriors(line: Line, window: number): Set<number> {
  const inside = new Set<number>();
  let at = line.prefix.length;
  let start = -1;
  for (const [i, s] of line.spans.entries()) {
    if (start > window) break;
    if (s.link && line.spans[i - 1]?.link !== s.link) start = at;
    at += s.text.length;
    if (s.link && line.spans[i + 1]?.link !== s.link) for (let p = start + 1; p < at && p <= window; p++) inside.add(p);
  }
  return inside;
}

/** The line with every link written out as `label (url)`. */
function unlink(line: Line): Line {
  const spans: Span[] = [];
  line.spans.forEach((s, i) => {
    const { link, ...rest } = s;
    spans.push(rest);
    if (link && line.spans[i + 1]?.link !== link) spans.push({ text: " (", marks: 0 }, { text: link, marks: 0, bare: true }, { text: ")", marks: 0 });
  });
  return { ...line, spans };
}

function takeCode(block: Block & { kind: "code" }, budget: number, m: Meter, fresh: boolean): Cut<Block> | null {
  const nl = m.text(LINE_SEP);
  let used = m.frame(block.lang);
  let n = 0;
  while (n < block.lines.length) {
    const c = m.codeLineOver(itemAt(block.lines, n), budget) + (n > 0 ? nl : 0);
    if (used + c > budget) break;
    used += c;
    n++;
  }
  const make = (head: string[], rest: string[]): Cut<Block> => {
    const r = trimBlankCode(rest);
    return { head: { kind: "code", lang: block.lang, lines: trimBlankCode(head) }, rest: r.length > 0 ? { kind: "code", lang: block.lang, lines: r } : null };
  };
  if (n > 0) return make(block.lines.slice(0, n), block.lines.slice(n));
  // The first line alone is too long: cut it (nothing dropped, code keeps every character).
  const first = itemAt(block.lines, 0);
  const room = budget - m.frame(block.lang);
  const fits = (at: number) => m.codeLine(first.slice(0, at)) <= room;
  const window = Math.min(first.length, reach(first, room, m.unit) + 1);
  const at =
    room > 0
      ? (largest(
          graphemeCuts(first, window + 1).filter((c) => c <= window),
          fits,
        ) ?? (fresh ? largest(codePointCuts(first, window), fits) : null))
      : null;
  // Indentation longer than a whole part: it is whitespace at a cut, so it goes.
  if (at !== null && first.slice(0, at).trim() === "")
    return fresh ? takeCode({ ...block, lines: [first.trimStart(), ...block.lines.slice(1)] }, budget, m, fresh) : null;
  if (at !== null) return make([first.slice(0, at)], [first.slice(at), ...block.lines.slice(1)]);
  // Too small a part for this fence's language: write the block without it.
  if (fresh && block.lang !== "") return takeCode({ ...block, lang: "" }, budget, m, fresh);
  return null;
}

function trimBlank(lines: Line[]): Line[] {
  const blank = (l: Line) => l.spans.length === 0 && l.prefix.trim() === "";
  let a = 0;
  let b = lines.length;
  while (a < b && blank(itemAt(lines, a))) a++;
  while (b > a && blank(itemAt(lines, b - 1))) b--;
  return a === 0 && b === lines.length ? lines : lines.slice(a, b);
}

function trimBlankCode(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && itemAt(lines, a).trim() === "") a++;
  while (b > a && itemAt(lines, b - 1).trim() === "") b--;
  return a === 0 && b === lines.length ? lines : lines.slice(a, b);
}

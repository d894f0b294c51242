import type { LengthUnit } from "./types.ts";

/** Length of `text` as a platform counts it: UTF-16 code units or Unicode code points. */
export function measure(text: string, unit: LengthUnit): number {
  if (unit === "utf16") return text.length;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Made on first use: an `Intl.Segmenter` loads ICU's break rules, about 10 ms of a cold
 * isolate's start-up when it was made at module load (docs/startup.md), and only text that is
 * not plain ASCII needs it.
 */
let segmenter: Intl.Segmenter | null = null;
const graphemes = (): Intl.Segmenter => (segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" }));

/**
 * Offsets (ascending, excluding 0) where `text[0, window)` may be cut without splitting a
 * grapheme cluster. The end of the window counts only when it is the end of `text`, because
 * a cluster may continue past it.
 */
export function graphemeCuts(text: string, window: number): number[] {
  const end = Math.min(window, text.length);
  const cuts: number[] = [];
  const head = text.slice(0, end);
  // Printable ASCII: every offset is a boundary (the common case, and much faster).
  if (/^[\x20-\x7e\t]*$/.test(head)) {
    for (let i = 1; i < end; i++) cuts.push(i);
  } else for (const { index } of graphemes().segment(head)) if (index > 0) cuts.push(index);
  if (end === text.length && end > 0) cuts.push(end);
  return cuts;
}

/**
 * The offset in `text` after `units` units (or its length): how far a head of that length can
 * reach, in UTF-16 offsets.
 */
export function reach(text: string, units: number, unit: LengthUnit): number {
  if (unit === "utf16") return Math.min(units, text.length);
  let i = 0;
  for (let n = 0; n < units && i < text.length; n++) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
  }
  return i;
}

/** Offsets where `text[0, window)` may be cut without splitting a surrogate pair. */
export function codePointCuts(text: string, window: number): number[] {
  const end = Math.min(window, text.length);
  const cuts: number[] = [];
  for (let i = 1; i <= end; i++) {
    const c = text.charCodeAt(i - 1);
    if (c >= 0xd800 && c <= 0xdbff && i < text.length) continue;
    cuts.push(i);
  }
  return cuts;
}

/** Columns a grapheme takes in a monospaced font: 2 for East Asian wide and emoji, else 1. */
function graphemeWidth(g: string): number {
  const cp = g.codePointAt(0) ?? 0;
  if (cp < 0x1100) return 1;
  if (g.includes("\uFE0F") || (cp >= 0x1f000 && cp <= 0x1faff)) return 2;
  const wide =
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x20000 && cp <= 0x3fffd);
  return wide ? 2 : 1;
}

/** Columns `text` takes in a monospaced font (tables, terminal wrapping). */
export function displayWidth(text: string): number {
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  let w = 0;
  for (const { segment } of graphemes().segment(text)) w += graphemeWidth(segment);
  return w;
}

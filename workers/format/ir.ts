/**
 * The one intermediate form every dialect renders from: blocks of lines of styled spans, or
 * code blocks. Parsing happens once; dialect writers and the splitter only read this.
 */

export const BOLD = 1;
export const ITALIC = 2;
export const STRIKE = 4;
export const CODE = 8;

/** A run of visible text with one set of styles. */
export interface Span {
  text: string;
  /** Bit set of BOLD, ITALIC, STRIKE, CODE. */
  marks: number;
  /** Target of a link the text is the label of (absolute http(s) only). */
  link?: string;
  /** A URL written bare: shown as text, never escaped (platforms link it themselves). */
  bare?: boolean;
}

/** One visible line. `prefix` (list marker, indentation) is visible text without styles. */
export interface Line {
  prefix: string;
  spans: Span[];
  /** Inside a block quote (quotes do not nest on any platform, so this is a flag). */
  quote: boolean;
  /** Heading level 1-6 for a top-level heading, else 0. */
  heading: number;
}

/** A block of lines (paragraph, heading, a whole list or quote) or a code block (fence, table). */
export type Block = { kind: "lines"; lines: Line[] } | { kind: "code"; lang: string; lines: string[] };

/** The visible text of a line's spans (without its prefix). */
export function spansText(spans: readonly Span[]): string {
  let out = "";
  for (const s of spans) out += s.text;
  return out;
}

/** The visible text of a line, prefix included. */
export function lineText(line: Line): string {
  return line.prefix + spansText(line.spans);
}

/** The part of `line` between visible offsets `from` and `to` (prefix counted). */
export function sliceLine(line: Line, from: number, to: number): Line {
  const plen = line.prefix.length;
  const prefix = line.prefix.slice(Math.min(from, plen), Math.min(to, plen));
  const spans: Span[] = [];
  let at = plen;
  for (const s of line.spans) {
    const start = at;
    const end = at + s.text.length;
    at = end;
    if (start >= to) break;
    if (end <= from) continue;
    const text = s.text.slice(Math.max(0, from - start), Math.min(s.text.length, to - start));
    if (text !== "") spans.push({ ...s, text });
  }
  return { prefix, spans, quote: line.quote, heading: line.heading };
}

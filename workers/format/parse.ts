import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";

/**
 * CommonMark with GFM tables and strikethrough (markdown-it). Raw HTML is recognised so it
 * can be shown literally; bare http(s) URLs are recognised only so writers know not to escape
 * inside them. markdown-it stays linear on pathological input where micromark did not.
 * Made on the first parse, not at start-up: its rules and linkify's patterns cost a cold
 * isolate a few milliseconds that a webhook never needs (docs/startup.md).
 */
let parser: InstanceType<typeof MarkdownIt> | null = null;

function md(): InstanceType<typeof MarkdownIt> {
  if (parser) return parser;
  parser = new MarkdownIt("default", { html: true, linkify: true, typographer: false, maxNesting: 200 });
  parser.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
  return parser;
}

/** Container markers (`>`, list markers) one line may open; deeper input is flattened. */
const MAX_MARKERS = 12;
/** Leading indentation kept, in columns; nesting by indentation stops there. */
const MAX_INDENT = 48;

/**
 * Parses Markdown into markdown-it's token stream, after {@link clampNesting}. Lone surrogates
 * become U+FFFD first: platforms reject text that is not valid Unicode.
 */
export function parseTokens(markdown: string): Token[] {
  return md().parse(clampNesting(markdown.toWellFormed()), {});
}

/** Parses one run of inline Markdown into inline tokens (used to re-parse a completed tail). */
export function parseInline(content: string): Token[] {
  return md().parseInline(content, {})[0]?.children ?? [];
}

/**
 * Bounds container nesting line by line so the parser never reaches its nesting limit (past
 * which markdown-it silently drops the rest of the document) and never recurses deeply: at
 * most MAX_MARKERS container markers per line and MAX_INDENT columns of leading indentation.
 * Ordinary replies are returned unchanged.
 */
export function clampNesting(markdown: string): string {
  const lines = markdown.split("\n");
  let changed = false;
  for (const [n, line] of lines.entries()) {
    const clamped = clampLine(line);
    if (clamped !== line) {
      lines[n] = clamped;
      changed = true;
    }
  }
  return changed ? lines.join("\n") : markdown;
}

function clampLine(line: string): string {
  if (line.length < 6 || THEMATIC_BREAK.test(line)) return line;
  let indentEnd = 0;
  while (line[indentEnd] === " " || line[indentEnd] === "\t") indentEnd++;
  let i = indentEnd;
  let markers = 0;
  let keepUntil = i;
  for (let m = markerLength(line, i); m > 0; m = markerLength(line, i)) {
    i += m;
    if (++markers === MAX_MARKERS) keepUntil = i;
    while (line[i] === " " || line[i] === "\t") i++;
  }
  const indent = columns(line.slice(0, indentEnd));
  if (markers <= MAX_MARKERS && indent <= MAX_INDENT) return line;
  const lead = indent > MAX_INDENT ? " ".repeat(MAX_INDENT) : line.slice(0, indentEnd);
  return lead + line.slice(indentEnd, markers > MAX_MARKERS ? keepUntil : i) + line.slice(i);
}

const THEMATIC_BREAK = /^[ \t]*([-*_])([ \t]*\1){2,}[ \t]*$/;

/** Length of a block-quote or list marker at `i` (with its following space), or 0. */
function markerLength(line: string, i: number): number {
  const c = line[i];
  if (c === ">") return line[i + 1] === " " ? 2 : 1;
  if ((c === "-" || c === "+" || c === "*") && (line[i + 1] === " " || line[i + 1] === "\t")) return 2;
  let j = i;
  while (j < line.length && j - i < 9 && line.charAt(j) >= "0" && line.charAt(j) <= "9") j++;
  if (j > i && (line[j] === "." || line[j] === ")") && (line[j + 1] === " " || line[j + 1] === "\t")) return j - i + 2;
  return 0;
}

function columns(ws: string): number {
  let col = 0;
  for (const c of ws) col = c === "\t" ? col + 4 - (col % 4) : col + 1;
  return col;
}

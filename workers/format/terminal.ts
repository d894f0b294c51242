import { itemAt } from "./item-at.ts";
import { BOLD, CODE, ITALIC, STRIKE, type Block, type Line, type Span } from "./ir.ts";
import { displayWidth } from "./measure.ts";
import { toBlocks } from "./render.ts";
import type { TerminalOptions } from "./types.ts";

const RESET = "\x1b[0m";
/** C0/C1 controls (ESC included) a hostile reply could use to drive the terminal; tabs stay. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const clean = (s: string) => s.replace(CONTROLS, "");

function sgr(marks: number, heading: boolean): string {
  const codes: number[] = [];
  if (marks & BOLD || heading) codes.push(1);
  if (marks & ITALIC) codes.push(3);
  if (marks & STRIKE) codes.push(9);
  if (marks & CODE) codes.push(36);
  return codes.length > 0 ? `\x1b[${codes.join(";")}m` : "";
}

interface Word {
  text: string;
  style: string;
}

/** A line's visible pieces with their styles; links as `label (url)` with the URL dimmed. */
function pieces(spans: readonly Span[], heading: boolean, color: boolean): Word[] {
  const out: Word[] = [];
  spans.forEach((s, i) => {
    out.push({ text: clean(s.text), style: color ? sgr(s.marks, heading) : "" });
    if (s.link && spans[i + 1]?.link !== s.link) out.push({ text: ` (${clean(s.link)})`, style: color ? "\x1b[2m" : "" });
  });
  return out;
}

function paint(words: readonly Word[]): string {
  let out = "";
  let styled = false;
  for (const w of words) {
    if (w.style) {
      out += RESET + w.style + w.text;
      styled = true;
    } else {
      out += (styled ? RESET : "") + w.text;
      styled = false;
    }
  }
  return styled ? out + RESET : out;
}

/** Word-wraps styled pieces at `width` columns; continuation lines start with `indent`. */
function wrap(words: readonly Word[], first: string, indent: string, width: number | undefined): string[] {
  const all = words.flatMap((w) =>
    w.text
      .split(/( +)/)
      .filter((t) => t !== "")
      .map((text) => ({ text, style: w.style })),
  );
  if (!width) return [first + paint(all)];
  const lines: string[] = [];
  let cur: Word[] = [];
  let col = displayWidth(first);
  let lead = first;
  for (const w of all) {
    const wd = displayWidth(w.text);
    const space = w.text.trim() === "";
    if (!space && col + wd > width && cur.some((c) => c.text.trim() !== "")) {
      lines.push(lead + paint(trimEnd(cur)));
      cur = [];
      lead = indent;
      col = displayWidth(indent);
    }
    if (space && cur.length === 0 && lines.length > 0) continue;
    cur.push(w);
    col += wd;
  }
  lines.push(lead + paint(trimEnd(cur)));
  return lines;
}

function trimEnd(words: Word[]): Word[] {
  let n = words.length;
  while (n > 0 && itemAt(words, n - 1).text.trim() === "") n--;
  return words.slice(0, n);
}

function lineOut(line: Line, o: TerminalOptions): string[] {
  const quote = line.quote ? (o.color ? "\x1b[2m│\x1b[0m " : "> ") : "";
  const prefix = clean(line.prefix);
  return wrap(pieces(line.spans, line.heading > 0, o.color), quote + prefix, quote + " ".repeat(displayWidth(prefix)), o.width);
}

function blockOut(b: Block, o: TerminalOptions): string {
  if (b.kind === "lines") return b.lines.flatMap((l) => lineOut(l, o)).join("\n");
  const lines = b.lines.map(clean);
  if (!o.color) return lines.map((l) => `    ${l}`.trimEnd()).join("\n");
  const label = b.lang ? [`\x1b[2m┌ ${clean(b.lang)}${RESET}`] : [];
  return [...label, ...lines.map((l) => `\x1b[2m│ ${l}${RESET}`), CODE_END].join("\n");
}

/** The line that closes a code block's box (with colour). */
export const CODE_END = `\x1b[2m└${RESET}`;

/**
 * Renders a reply for the CLI. With `color`, ANSI bold, italic, strikethrough, cyan inline
 * code, code blocks dimmed in a box open on the right (`┌ lang`, `│ code`, `└`); without, plain text with code indented four
 * spaces and quotes marked `> `. Links read `text (url)` either way. Control characters in the
 * reply are removed so it cannot drive the terminal.
 */
export function renderTerminal(markdown: string, opts: TerminalOptions): string {
  return toBlocks(markdown)
    .map((b) => blockOut(b, opts))
    .join("\n\n");
}

import type { Token } from "markdown-it";
import { parseTokens } from "./parse.ts";
import { CODE_END, renderTerminal } from "./terminal.ts";
import type { TerminalOptions } from "./types.ts";

/** A top-level block of the source: its lines, and whether it is finished even if it is the last one. */
interface Top {
  type: string;
  start: number;
  end: number;
  closed: boolean;
}

/**
 * Renders a reply for a terminal while it streams, never rewriting what was printed (a
 * terminal cannot take back what scrolled by): a top-level block is printed once the next
 * one has started, when nothing that follows can change it any more (a heading, a rule or a
 * closed fence at once); a top-level fenced code block is printed line by line as its lines
 * complete; the rest is printed by {@link end}.
 * Concatenated, everything `push` and `end` return is `renderTerminal` of the whole reply,
 * except that each block is rendered from its own source (a reference-style link whose
 * definition comes in a later block stays as written).
 */
export class TerminalStream {
  readonly #o: TerminalOptions;
  #text = "";
  /** Where the first block not yet printed in full starts. */
  #from = 0;
  /** How far the text has been looked at (a line end). */
  #seen = 0;
  /** Lines of the current block already printed (a code block still streaming). */
  #printed = 0;
  #any = false;
  #first: string | null = null;
  #cr = "";

  constructor(opts: TerminalOptions) {
    this.#o = opts;
  }

  /**
   * The markdown-it type of the first block printed (`paragraph`, `heading`, `fence`, …), or
   * null before anything was: whether the first output can sit on a label's line.
   */
  get firstBlock(): string | null {
    return this.#first;
  }

  /** Takes more of the reply; returns what can be printed now (possibly nothing). */
  push(delta: string): string {
    // Line ends as the parser counts them (it reads a lone CR as one); a CR at the end of a
    // delta waits, since its LF may come next.
    const held = this.#cr + delta;
    this.#cr = held.endsWith("\r") ? "\r" : "";
    this.#text += (this.#cr ? held.slice(0, -1) : held).replace(/\r\n?/g, "\n");
    const end = this.#text.lastIndexOf("\n") + 1;
    // Only whole lines are looked at: a line being typed can still change what it is.
    if (end <= this.#seen) return "";
    this.#seen = end;
    return this.#advance(end, false);
  }

  /** The reply is over: returns the rest of it. */
  end(): string {
    if (this.#cr) this.#text += "\n";
    this.#cr = "";
    return this.#advance(this.#text.length, true);
  }

  #advance(end: number, last: boolean): string {
    const src = this.#text.slice(this.#from, end);
    const starts = lineStarts(src);
    const at = (line: number) => starts[line] ?? src.length;
    const blocks = topLevel(parseTokens(src), src, starts);
    let out = "";
    let cut = 0;
    for (const [i, b] of blocks.entries()) {
      const next = blocks[i + 1];
      const upTo = next ? at(next.start) : b.closed && !last ? at(b.end) : src.length;
      const done = next !== undefined || last || b.closed;
      if (done) {
        out += this.#emit(renderTerminal(src.slice(cut, upTo), this.#o), b.type, true);
        cut = upTo;
      } else if (b.type === "fence") {
        // The box's closing line waits for the fence to close: more code lines come before it.
        const shown = renderTerminal(src.slice(cut, upTo), this.#o);
        const open = shown === CODE_END ? "" : shown.endsWith(`\n${CODE_END}`) ? shown.slice(0, -CODE_END.length - 1) : shown;
        out += this.#emit(open, b.type, false);
      }
    }
    this.#from += cut;
    return out;
  }

  /** The lines of a block's rendering not printed yet, after the separator they need. */
  #emit(rendered: string, type: string, complete: boolean): string {
    const lines = rendered === "" ? [] : rendered.split("\n");
    const fresh = lines.slice(this.#printed);
    let out = "";
    if (fresh.length > 0) {
      out = (this.#printed > 0 ? "\n" : this.#any ? "\n\n" : "") + fresh.join("\n");
      this.#first ??= type;
      this.#any = true;
    }
    this.#printed = complete ? 0 : lines.length;
    return out;
  }
}

/** Offsets where each line of `src` starts. */
function lineStarts(src: string): number[] {
  const out = [0];
  for (let i = src.indexOf("\n"); i >= 0; i = src.indexOf("\n", i + 1)) out.push(i + 1);
  return out;
}

/** The top-level blocks of a token stream, with their line ranges. */
function topLevel(tokens: readonly Token[], src: string, starts: readonly number[]): Top[] {
  const out: Top[] = [];
  for (const t of tokens) {
    if (t.level !== 0 || t.nesting === -1 || !t.map) continue;
    const [start, end] = t.map;
    const type = t.type.replace(/_open$/, "");
    // A heading or a rule is one line (or two, setext): nothing after it can change it.
    const closed = type === "fence" ? closesFence(src, starts, t, start, end) : type === "heading" || type === "hr";
    out.push({ type, start, end, closed });
  }
  return out;
}

/** Whether the last line of a fence token's range is its closing fence (an unclosed fence runs to the end). */
function closesFence(src: string, starts: readonly number[], t: Token, start: number, end: number): boolean {
  if (end - 1 <= start) return false;
  const line = src.slice(starts[end - 1], end < starts.length ? starts[end] : src.length).replace(/\n$/, "");
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  const fence = m?.[1];
  return fence !== undefined && fence.charAt(0) === t.markup.charAt(0) && fence.length >= t.markup.length;
}

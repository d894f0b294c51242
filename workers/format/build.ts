import type { Token } from "markdown-it";
import { attr, inlineLines } from "./inline.ts";
import { itemAt } from "./item-at.ts";
import { BOLD, type Block, type Line, type Span } from "./ir.ts";
import { plainSpans } from "./plain.ts";
import { tableLines, type Align } from "./table.ts";

/** Shown for a thematic break. */
const RULE = "───";
/** List indentation stops growing here (characters). */
const MAX_INDENT = 24;

/** An open container; `leaves` counts the leaves emitted inside it so far. */
type Frame =
  | { kind: "quote"; leaves: number }
  /** list: the next item's number (null for bullets) and the ordered delimiter. */
  | { kind: "list"; leaves: number; next: number | null; delim: string }
  /** item: prefix of its first line (until used) and of its later lines. */
  | ItemFrame;

type ItemFrame = { kind: "item"; leaves: number; first: string | null; rest: string };

/**
 * Turns markdown-it's token stream into blocks: each top-level paragraph, heading or rule is
 * a block; a whole top-level list or quote is one block of lines; code blocks and tables are
 * code blocks, lifted out of any list or quote around them. Iterative over the flat stream.
 */
export function buildBlocks(tokens: readonly Token[]): Block[] {
  const b = new Builder();
  for (let k = 0; k < tokens.length; k++) b.token(tokens, k);
  b.flush();
  return b.blocks;
}

class Builder {
  readonly blocks: Block[] = [];
  #lines: Line[] = [];
  readonly #stack: Frame[] = [];
  #quotes = 0;
  #heading = 0;
  #task: string | null = null;
  #table: { rows: string[][]; aligns: Align[] } | null = null;

  /** Handles tokens[k] (a task item looks ahead at its first inline). */
  token(tokens: readonly Token[], k: number): void {
    const t = tokens[k];
    if (t === undefined) throw new RangeError(`no token at ${k} of ${tokens.length}`);
    switch (t.type) {
      case "blockquote_open":
        this.#stack.push({ kind: "quote", leaves: 0 });
        this.#quotes++;
        break;
      case "bullet_list_open":
      case "ordered_list_open": {
        const start = Number(attr(t, "start") || 1);
        this.#stack.push({ kind: "list", leaves: 0, next: t.type === "ordered_list_open" ? start : null, delim: t.markup || "." });
        break;
      }
      case "list_item_open":
        this.#openItem(tokens, k);
        break;
      case "blockquote_close":
        this.#quotes--;
        this.#pop();
        break;
      case "bullet_list_close":
      case "ordered_list_close":
      case "list_item_close":
        this.#pop();
        break;
      case "heading_open":
        this.#heading = Number(t.tag.slice(1));
        break;
      case "heading_close":
        this.#heading = 0;
        break;
      case "inline":
        this.#inline(t);
        break;
      case "fence":
      case "code_block":
        this.#code(t.info.trim().split(/\s/)[0] ?? "", t.content);
        break;
      case "html_block":
        this.#leaf(true);
        for (const text of t.content.replace(/\n$/, "").split("\n")) this.#line(text.trim() === "" ? [] : [{ text: text.trimEnd(), marks: 0 }]);
        this.#endLeaf();
        break;
      case "hr":
        this.#leaf(true);
        this.#line([{ text: RULE, marks: 0 }]);
        this.#endLeaf();
        break;
      case "table_open":
        this.#table = { rows: [], aligns: [] };
        break;
      case "tr_open":
        this.#table?.rows.push([]);
        break;
      case "th_open":
      case "td_open":
        if (this.#table && this.#table.rows.length === 1) this.#table.aligns.push(alignOf(attr(t, "style")));
        break;
      case "table_close":
        if (this.#table) this.#emitCode("", tableLines(this.#table.rows, this.#table.aligns));
        this.#table = null;
        break;
    }
  }

  /** Ends the current lines block (at top level) and pushes it. */
  flush(): void {
    const lines = trimBlank(this.#lines);
    if (lines.length > 0) this.blocks.push({ kind: "lines", lines });
    this.#lines = [];
  }

  #pop(): void {
    this.#stack.pop();
    if (this.#stack.length === 0) this.flush();
  }

  #openItem(tokens: readonly Token[], k: number): void {
    const top = this.#stack[this.#stack.length - 1];
    const list = top?.kind === "list" ? top : undefined;
    const parent = this.#item();
    let marker = "• ";
    if (list?.next != null) marker = `${list.next++}${list.delim} `;
    // A GFM task item: the checkbox replaces the bullet.
    const inline = tokens[k + 2];
    const content = inline?.type === "inline" ? inline.content : "";
    const task = /^\[([ xX])\](?:[ \t]|$)/.exec(content);
    this.#task = task ? task[0] : null;
    if (task) marker = list?.next != null ? `${marker}${task[1] === " " ? "☐" : "☑"} ` : `${task[1] === " " ? "☐" : "☑"} `;
    const base = parent ? (parent.first ?? parent.rest) : "";
    if (parent) parent.first = null;
    const rest = parent ? parent.rest : "";
    const indent = rest.length + marker.length <= MAX_INDENT ? rest + " ".repeat(marker.length) : rest;
    this.#stack.push({ kind: "item", leaves: 0, first: base + marker, rest: indent });
  }

  #item(): ItemFrame | undefined {
    for (let i = this.#stack.length - 1; i >= 0; i--) {
      const f = this.#stack[i];
      if (f?.kind === "item") return f;
    }
    return undefined;
  }

  #inline(t: Token): void {
    if (this.#table) {
      const row = this.#table.rows[this.#table.rows.length - 1];
      row?.push(
        inlineLines(t.children ?? [])
          .map(plainSpans)
          .join(" "),
      );
      return;
    }
    const top = this.#stack.length === 0;
    const heading = this.#heading;
    let lines = inlineLines(t.children ?? [], heading > 0 && !top ? BOLD : 0);
    if (this.#task) {
      lines = stripTask(lines, this.#task);
      this.#task = null;
    }
    if (lines.every((l) => l.length === 0)) return;
    this.#leaf(true);
    for (const spans of lines) this.#line(spans, top ? heading : 0);
    this.#endLeaf();
  }

  /** A leaf at top level is a block of its own. */
  #endLeaf(): void {
    if (this.#stack.length === 0) this.flush();
  }

  /** Starts a leaf block: a blank line between the children of a quote. */
  #leaf(visible: boolean): void {
    const inner = this.#stack[this.#stack.length - 1];
    if (visible && inner?.kind === "quote" && inner.leaves > 0) this.#line([]);
    if (visible) for (const f of this.#stack) f.leaves++;
  }

  #line(spans: Span[], heading = 0): void {
    const item = this.#item();
    let prefix = "";
    if (item) {
      prefix = item.first ?? item.rest;
      if (spans.length > 0) item.first = null;
    }
    this.#lines.push({ prefix: spans.length === 0 ? "" : prefix, spans, quote: this.#quotes > 0, heading });
  }

  #code(lang: string, content: string): void {
    // Blank lines around the code carry nothing (and a split would drop them anyway).
    const lines = content.split("\n");
    while (lines[0]?.trim() === "") lines.shift();
    while (lines[lines.length - 1]?.trim() === "") lines.pop();
    if (lines.length === 0) return;
    this.#emitCode(lang.replace(/[^\w#+.-]/g, "").slice(0, 32), lines);
  }

  /** Code leaves the lines around it: inside a container it ends the current lines block. */
  #emitCode(lang: string, lines: string[]): void {
    const item = this.#item();
    // A list item that starts with code keeps its marker on a line of its own.
    if (item?.first) this.#lines.push({ prefix: item.first.trimEnd(), spans: [], quote: this.#quotes > 0, heading: 0 });
    if (item) item.first = null;
    for (const f of this.#stack) f.leaves++;
    this.flush();
    this.blocks.push({ kind: "code", lang, lines });
  }
}

function alignOf(style: string): Align {
  const m = /text-align:(left|right|center)/.exec(style);
  return (m?.[1] as Align | undefined) ?? "";
}

function stripTask(lines: Span[][], box: string): Span[][] {
  const head = lines[0];
  const first = head?.[0];
  if (first && first.text.startsWith(box.trimEnd())) first.text = first.text.slice(box.trimEnd().length).replace(/^[ \t]+/, "");
  if (first?.text === "") head?.shift();
  return lines;
}

function trimBlank(lines: Line[]): Line[] {
  let a = 0;
  let b = lines.length;
  const blank = (l: Line) => l.spans.length === 0 && l.prefix.trim() === "";
  while (a < b && blank(itemAt(lines, a))) a++;
  while (b > a && blank(itemAt(lines, b - 1))) b--;
  return lines.slice(a, b);
}

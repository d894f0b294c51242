import { itemAt } from "./item-at.ts";
import type { Token } from "markdown-it";
import { parseInline } from "./parse.ts";
import { scanTail } from "./scan.ts";

/**
 * Streaming preview: makes the end of a reply that is still being written look as it will once
 * finished. Only the last block can be unfinished (a blank line ends every inline construct),
 * so only it is touched: a half-typed closing fence is hidden, an inline tail is completed by
 * {@link scanTail}, a one-character setext underline (usually the start of a list item) is
 * read as text. Well-formed replies come out unchanged.
 */
export function completeTail(tokens: Token[], source: string): void {
  if (/\n[ \t]*\n[ \t]*$/.test(source) || source.trim() === "") return;
  for (let k = tokens.length - 1; k >= 0; k--) {
    const t = itemAt(tokens, k);
    // The parser pads a short table row with empty cells; the cell being typed is before them.
    if (t.type === "inline" && t.content === "" && /^t[hd]_open$/.test(tokens[k - 1]?.type ?? "")) {
      k--;
      continue;
    }
    if (t.type === "inline") return completeInline(tokens, k);
    if (t.type === "fence") return completeFence(t);
    if (!t.type.endsWith("_close")) return;
  }
}

/** Drops a last line that is the closing fence being typed (fewer markers than the opening). */
function completeFence(t: Token): void {
  const lines = t.content.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const last = lines[lines.length - 1]?.trim() ?? "";
  const ch = t.markup[0];
  if (ch && last !== "" && last.length < t.markup.length && [...last].every((c) => c === ch)) {
    lines.pop();
    t.content = lines.length > 0 ? `${lines.join("\n")}\n` : "";
  }
}

function completeInline(tokens: Token[], k: number): void {
  const t = itemAt(tokens, k);
  const open = tokens[k - 1];
  // "Text\n-" is a setext heading only until the list item it really starts is typed.
  if (open?.type === "heading_open" && (open.markup === "-" || open.markup === "=") && t.map && open.map) {
    const close = tokens[k + 1];
    open.type = "paragraph_open";
    open.tag = "p";
    if (close?.type === "heading_close") {
      close.type = "paragraph_close";
      close.tag = "p";
    }
  }
  let content = t.content;
  // A paragraph made only of "|" lines is a table whose delimiter row is not typed yet.
  if (open?.type === "paragraph_open" && content.split("\n").every((l) => l.trimStart().startsWith("|"))) content = "";
  const lines = content.split("\n");
  if (lines.length > 1 && /^[ \t]*([-+*>]|#{1,6}|\d{1,9}[.)]?)[ \t]*$/.test(itemAt(lines, lines.length - 1))) content = lines.slice(0, -1).join("\n");
  const done = scanTail(content);
  if (done.text === t.content && done.closers === "") return;
  let children = parseInline(done.text + done.closers);
  // The parser may disagree with the scanner: if an added closer still shows, drop the
  // unmatched openers instead of closing them.
  if (done.closers !== "" && endsWithMarker(children, done.closers)) children = parseInline(done.fallback);
  t.content = done.text;
  t.children = children;
}

function endsWithMarker(children: readonly Token[], closers: string): boolean {
  const last = [...children].reverse().find((c) => c.type === "text" || c.type === "code_inline");
  const ch = closers.at(-1);
  return ch !== undefined && last?.type === "text" && "*_~".includes(ch) && last.content.endsWith(ch);
}

import type { Token } from "markdown-it";
import { itemAt } from "./item-at.ts";
import { BOLD, CODE, ITALIC, STRIKE, type Span } from "./ir.ts";

/** A token attribute as a string ("" when absent). */
export function attr(t: Token, name: string): string {
  const v = t.attrGet(name);
  return v === null ? "" : String(v);
}

/** URLs a platform can link text to: absolute http(s), of a sane length. */
export function isLinkable(url: string): boolean {
  return url.length <= 2048 && /^https?:\/\/[^\s\u0000-\u001f\u007f]+$/i.test(url);
}

const MARK_OF: Record<string, number> = { em: ITALIC, strong: BOLD, s: STRIKE };

/** How the spans of one link are shown. */
type LinkMode = { kind: "link"; url: string } | { kind: "bare" } | { kind: "suffix"; url: string; alone: boolean };

/**
 * Converts one inline token's children into lines of spans (soft and hard breaks end a
 * line). Iterative, so deeply nested emphasis cannot exhaust the stack.
 */
export function inlineLines(children: readonly Token[], baseMarks = 0): Span[][] {
  const lines: Span[][] = [[]];
  const counts = new Map<number, number>();
  let link: LinkMode | null = null;
  const marks = () => {
    let m = baseMarks;
    for (const [bit, n] of counts) if (n > 0) m |= bit;
    return m;
  };
  const push = (text: string, extra: Partial<Span> = {}) => {
    if (text === "") return;
    const span: Span = { text, marks: marks() | (extra.marks ?? 0) };
    if (link?.kind === "link") span.link = link.url;
    if (link?.kind === "bare" || extra.bare) span.bare = true;
    itemAt(lines, lines.length - 1).push(span);
  };
  for (let k = 0; k < children.length; k++) {
    const t = itemAt(children, k);
    const bit = MARK_OF[t.type.replace(/_(open|close)$/, "")];
    if (bit !== undefined) {
      counts.set(bit, (counts.get(bit) ?? 0) + (t.type.endsWith("_open") ? 1 : -1));
    } else if (t.type === "text" || t.type === "html_inline") push(t.content);
    else if (t.type === "code_inline") push(t.content, { marks: CODE });
    else if (t.type === "softbreak" || t.type === "hardbreak") lines.push([]);
    else if (t.type === "link_open") link = linkMode(t, children, k);
    else if (t.type === "link_close") {
      if (link?.kind === "suffix") pushSuffix(lines, link.url, link.alone);
      link = null;
    } else if (t.type === "image") {
      const src = attr(t, "src");
      push(t.content);
      if (src !== "") pushSuffix(lines, src, t.content === "");
    }
  }
  return lines.map(tidy);
}

/** ` (url)` after a label, or the URL alone when there is no label. */
function pushSuffix(lines: Span[][], url: string, alone = false): void {
  const line = itemAt(lines, lines.length - 1);
  const bare = isLinkable(url);
  if (!alone) line.push({ text: " (", marks: 0 });
  line.push(bare ? { text: url, marks: 0, bare } : { text: url, marks: 0 });
  if (!alone) line.push({ text: ")", marks: 0 });
}

/**
 * A link whose label is its own URL (autolinks, bare URLs) stays text; one to an absolute
 * http(s) URL is a link; any other target (relative, unusual scheme) is shown after the label.
 */
function linkMode(open: Token, children: readonly Token[], start: number): LinkMode {
  const url = attr(open, "href");
  if (open.markup === "autolink" || open.markup === "linkify") return { kind: "bare" };
  let label = "";
  for (const t of children.slice(start + 1)) {
    if (t.type === "link_close") break;
    label += t.content;
  }
  if (label === url || `mailto:${label}` === url || `http://${label}` === url) return { kind: "bare" };
  if (label === "" || !isLinkable(url)) return { kind: "suffix", url, alone: label === "" };
  return { kind: "link", url };
}

/** Drops empty spans, merges equal neighbours, and trims the line's outer whitespace. */
function tidy(line: Span[]): Span[] {
  const out: Span[] = [];
  for (const s of line) {
    const last = out[out.length - 1];
    if (s.text === "") continue;
    if (last && last.marks === s.marks && last.link === s.link && last.bare === s.bare) last.text += s.text;
    else out.push({ ...s });
  }
  for (let first = out[0]; first !== undefined && !(first.marks & CODE); first = out[0]) {
    first.text = first.text.replace(/^[ \t]+/, "");
    if (first.text !== "") break;
    out.shift();
  }
  for (let last = out[out.length - 1]; last !== undefined && !(last.marks & CODE); last = out[out.length - 1]) {
    last.text = last.text.replace(/[ \t]+$/, "");
    if (last.text !== "") break;
    out.pop();
  }
  return out;
}

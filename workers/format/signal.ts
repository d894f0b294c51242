import { BOLD, CODE, ITALIC, STRIKE, spansText, type Line, type Span } from "./ir.ts";
import { nest } from "./nest.ts";
import type { TelegramEntity } from "./types.ts";
import type { Writer } from "./writer.ts";

const TYPE_OF: Record<string, TelegramEntity["type"]> = { b: "bold", i: "italic", s: "strikethrough", c: "code" };

function keysOf(s: Span): string[] {
  const keys: string[] = [];
  if (s.marks & BOLD) keys.push("b");
  if (s.marks & ITALIC) keys.push("i");
  if (s.marks & STRIKE) keys.push("s");
  if (s.marks & CODE) keys.push("c");
  return keys;
}

/** Signal has no link style: a link's label is followed by ` (url)` once, unstyled. */
function withUrls(spans: readonly Span[]): Span[] {
  const out: Span[] = [];
  spans.forEach((s, i) => {
    const { link, ...rest } = s;
    out.push(rest);
    if (link && spans[i + 1]?.link !== link && s.text !== link) out.push({ text: ` (${link})`, marks: 0 });
  });
  return out;
}

/**
 * Signal: the text as users read it, formatting as ranges (the adapter turns them into
 * signal-cli's `start:length:STYLE` text styles, in UTF-16 units like these offsets).
 * Headings are bold, links show their URL after the label, code is monospace.
 */
export const signalWriter: Writer = {
  entities: true,
  codeFrame: () => ({ open: "", close: "" }),
  codeLine: (text) => text,
  line(line: Line) {
    const styled = line.heading > 0 ? line.spans.map((s) => ({ ...s, marks: s.marks | BOLD })) : line.spans;
    const spans = withUrls(styled);
    const base = line.prefix.length;
    const entities = nest(spans.map((s) => ({ len: s.text.length, keys: keysOf(s) }))).map((r): TelegramEntity => {
      const type = TYPE_OF[r.key.charAt(0)];
      if (type === undefined) throw new RangeError(`style key ${r.key} has no Signal style`);
      return { type, offset: base + r.start, length: r.end - r.start };
    });
    return { text: line.prefix + spansText(spans), entities };
  },
};

import { BOLD, CODE, ITALIC, STRIKE, spansText, type Line, type Span } from "./ir.ts";
import { nest } from "./nest.ts";
import type { TelegramEntity } from "./types.ts";
import type { Writer } from "./writer.ts";

const TYPE_OF: Record<string, TelegramEntity["type"]> = { b: "bold", i: "italic", s: "strikethrough", c: "code", L: "text_link" };

/** Style keys of a span; a link's key carries its URL so only equal links merge. */
function keysOf(s: Span): string[] {
  const keys: string[] = [];
  if (s.marks & BOLD) keys.push("b");
  if (s.marks & ITALIC) keys.push("i");
  if (s.marks & STRIKE) keys.push("s");
  if (s.link) keys.push(`L${s.link}`);
  if (s.marks & CODE) keys.push("c");
  return keys;
}

/** Telegram: the text as users read it, formatting as MessageEntity objects. Headings are bold. */
export const telegramWriter: Writer = {
  entities: true,
  codeFrame: () => ({ open: "", close: "" }),
  codeLine: (text) => text,
  line(line: Line) {
    const spans = line.heading > 0 ? line.spans.map((s) => ({ ...s, marks: s.marks | BOLD })) : line.spans;
    const base = line.prefix.length;
    const entities = nest(spans.map((s) => ({ len: s.text.length, keys: keysOf(s) }))).map((r): TelegramEntity => {
      const type = TYPE_OF[r.key.charAt(0)];
      if (type === undefined) throw new RangeError(`style key ${r.key} has no Telegram entity type`);
      const e: TelegramEntity = { type, offset: base + r.start, length: r.end - r.start };
      if (type === "text_link") e.url = r.key.slice(1);
      return e;
    });
    return { text: line.prefix + spansText(spans), entities };
  },
};

import type { Block, Line } from "./ir.ts";
import type { TelegramEntity } from "./types.ts";

/** A serialised line: its text and (Telegram) entities relative to its start. */
export interface Piece {
  text: string;
  entities: TelegramEntity[];
}

/**
 * How one dialect writes the intermediate form. Lines and code lines are serialised on their
 * own, so the length of a part is the sum of its pieces plus the separators: the splitter
 * measures exactly what is sent.
 */
export interface Writer {
  line(line: Line): Piece;
  /** Text around a code block's lines (fences), empty for Telegram and plain. */
  codeFrame(lang: string): { open: string; close: string };
  /** One line of code as it appears inside the block (escaped). */
  codeLine(text: string): string;
  /** Whether the dialect carries formatting as entities (Telegram). */
  entities: boolean;
}

/** Between blocks. */
export const BLOCK_SEP = "\n\n";
/** Between lines of a block. */
export const LINE_SEP = "\n";

/** Writes one part: its blocks joined by blank lines, with entities for pre and quotes. */
export function writePart(blocks: readonly Block[], w: Writer): Piece {
  let text = "";
  const entities: TelegramEntity[] = [];
  blocks.forEach((block, i) => {
    if (i > 0) text += BLOCK_SEP;
    if (block.kind === "code") {
      const { open, close } = w.codeFrame(block.lang);
      const body = block.lines.map((l) => w.codeLine(l)).join(LINE_SEP);
      const offset = text.length + open.length;
      text += open + body + close;
      if (w.entities && body.length > 0)
        entities.push(block.lang ? { type: "pre", offset, length: body.length, language: block.lang } : { type: "pre", offset, length: body.length });
      return;
    }
    let quoteStart = -1;
    let lastEnd = text.length;
    const endQuote = () => {
      if (w.entities && quoteStart >= 0 && lastEnd > quoteStart) entities.push({ type: "blockquote", offset: quoteStart, length: lastEnd - quoteStart });
      quoteStart = -1;
    };
    block.lines.forEach((line, j) => {
      if (j > 0) text += LINE_SEP;
      if (!line.quote) endQuote();
      else if (quoteStart < 0) quoteStart = text.length;
      const piece = w.line(line);
      for (const e of piece.entities) entities.push({ ...e, offset: e.offset + text.length });
      text += piece.text;
      lastEnd = text.length;
    });
    endQuote();
  });
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text, entities };
}

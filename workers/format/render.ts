import { buildBlocks } from "./build.ts";
import { discordWriter } from "./discord.ts";
import type { Block } from "./ir.ts";
import { parseTokens } from "./parse.ts";
import { completeTail } from "./partial.ts";
import { plainWriter } from "./plain.ts";
import { signalWriter } from "./signal.ts";
import { slackWriter } from "./slack.ts";
import { splitBlocks } from "./split.ts";
import { telegramWriter } from "./telegram.ts";
import { whatsappWriter } from "./whatsapp.ts";
import { MIN_LIMIT, type Dialect, type RenderedPart, type RenderOptions } from "./types.ts";
import { writePart, type Writer } from "./writer.ts";

const WRITERS: Record<Dialect, Writer> = {
  telegram: telegramWriter,
  slack: slackWriter,
  discord: discordWriter,
  whatsapp: whatsappWriter,
  signal: signalWriter,
  plain: plainWriter,
};

/** Parses once into the intermediate form; `partial` closes what a streaming reply left open. */
export function toBlocks(markdown: string, partial = false): Block[] {
  const tokens = parseTokens(markdown);
  if (partial) completeTail(tokens, markdown);
  return buildBlocks(tokens);
}

/**
 * Renders a model's Markdown reply for one platform, split into parts within `opts.limit`.
 * Always at least one part; empty or whitespace-only input gives one part with empty text.
 * Telegram parts carry `entities` (UTF-16 offsets relative to the part); the others carry
 * their platform's markup in `text`. Throws RangeError only for an invalid `opts`.
 */
export function renderMessage(markdown: string, dialect: Dialect, opts: RenderOptions): RenderedPart[] {
  if (!Number.isInteger(opts.limit) || opts.limit < MIN_LIMIT) throw new RangeError(`limit must be an integer >= ${MIN_LIMIT}`);
  if (opts.unit !== "utf16" && opts.unit !== "codepoints") throw new RangeError("unit must be utf16 or codepoints");
  const w = WRITERS[dialect];
  if (!w) throw new RangeError(`unknown dialect ${String(dialect)}`);
  const parts = splitBlocks(toBlocks(markdown, opts.partial === true), w, opts.limit, opts.unit);
  return parts.map((blocks) => {
    const { text, entities } = writePart(blocks, w);
    return dialect === "telegram" || dialect === "signal" ? { text, entities } : { text };
  });
}

/** A part that shows `text` exactly as it is, in the dialect's shape (no formatting). */
export function plainPart(text: string, dialect: Dialect): RenderedPart {
  return dialect === "telegram" || dialect === "signal" ? { text, entities: [] } : { text };
}

/** What a reader sees with formatting removed: the whole reply, unsplit, links as `label (url)`. */
export function renderPlain(markdown: string): string {
  return writePart(toBlocks(markdown), plainWriter).text;
}

/** Chat platforms a reply can be rendered for (`plain`: formatting removed). */
export type Dialect = "telegram" | "slack" | "discord" | "whatsapp" | "signal" | "plain";

/** How a platform counts message length: Telegram and Discord in UTF-16 units, Slack in code points. */
export type LengthUnit = "utf16" | "codepoints";

/**
 * A Telegram Bot API MessageEntity. Offsets and lengths are in UTF-16 code units of the part's
 * `text`. Entities are either disjoint or one contains the other; `code` and `pre` contain none.
 */
export interface TelegramEntity {
  type: "bold" | "italic" | "underline" | "strikethrough" | "code" | "pre" | "text_link" | "blockquote";
  offset: number;
  length: number;
  /** Only for `text_link`: an absolute http(s) URL. */
  url?: string;
  /** Only for `pre`, when the fence named one. */
  language?: string;
}

/** One message of a reply, within the limit it was rendered for. */
export interface RenderedPart {
  text: string;
  /** Telegram and Signal: the formatting of `text` (empty array when there is none). */
  entities?: TelegramEntity[];
}

/** Where and how to split a rendered reply. */
export interface RenderOptions {
  /** Maximum length of one part in `unit`s; an integer of at least {@link MIN_LIMIT}. */
  limit: number;
  unit: LengthUnit;
  /**
   * The reply is still streaming: constructs left open at its end (a fence, `**`, `_`, `` ` ``,
   * `~~`, a link) are closed for the preview, and half-typed markers are hidden.
   */
  partial?: boolean;
}

/** Options for {@link renderTerminal}. */
export interface TerminalOptions {
  /** ANSI styles (bold, italic, dim code) when true; plain readable text when false. */
  color: boolean;
  /** Wrap prose at this many columns (code and tables are never wrapped). */
  width?: number;
}

/** The smallest `limit` accepted: room for one escaped character with its quote and fence markers. */
export const MIN_LIMIT = 16;

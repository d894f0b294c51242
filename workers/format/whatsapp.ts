import { markerLine, type MarkerStyle } from "./markers.ts";
import type { Writer } from "./writer.ts";

/** A marker character written as text would start formatting: a zero-width space after it keeps it literal. */
const MARKERS = /[*_~`]/g;

const style: MarkerStyle = {
  bold: "*",
  italic: "_",
  strike: "~",
  // WhatsApp has no escape: a literal `*`, `_`, `~` or backtick is followed by a zero-width space.
  text: (s) => s.replace(MARKERS, "$&\u200b"),
  bare: (s) => s,
  code: (s) => (s.includes("`") || s.trim() === "" ? null : `\`${s}\``),
  // No masked links: the label, then the URL (which WhatsApp links), once.
  link: (label, url) => (label === url || label === url.replace(/^https?:\/\//, "") ? url : `${label.replace(MARKERS, "$&\u200b")} (${url})`),
  quote: () => "> ",
  heading: () => null,
  wordBoundaries: true,
};

/** WhatsApp: `*bold*`, `_italic_`, `~strike~`, `` `code` ``, ``` blocks (no language), `> ` quotes, `- ` lists. */
export const whatsappWriter: Writer = {
  entities: false,
  codeFrame: () => ({ open: "```\n", close: "\n```" }),
  codeLine: (text) => text.replace(/```/g, "``\u200b`"),
  line: (line) => markerLine(line, style),
};

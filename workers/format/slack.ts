import { markerLine, type MarkerStyle } from "./markers.ts";
import type { Writer } from "./writer.ts";

/** Slack's three reserved characters; nothing else can be escaped in mrkdwn. */
function escapeSlack(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const style: MarkerStyle = {
  bold: "*",
  italic: "_",
  strike: "~",
  text: (s) => escapeSlack(s),
  bare: (s) => escapeSlack(s),
  code: (s) => (s.includes("`") || s.trim() === "" ? null : `\`${escapeSlack(s)}\``),
  link: (label, url) => `<${escapeSlack(url).replace(/\|/g, "%7C")}|${escapeSlack(label)}>`,
  quote: (blank) => (blank ? ">" : "> "),
  heading: () => null,
  wordBoundaries: true,
};

/** Slack mrkdwn: `*bold*`, `_italic_`, `~strike~`, `<url|text>`, `>` quotes, fences without language. */
export const slackWriter: Writer = {
  entities: false,
  codeFrame: () => ({ open: "```\n", close: "\n```" }),
  // Three backticks inside code would end the block: a zero-width space keeps them apart.
  codeLine: (text) => escapeSlack(text).replace(/```/g, "``\u200b`"),
  line: (line) => markerLine(line, style),
};

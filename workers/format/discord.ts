import { markerLine, type MarkerStyle } from "./markers.ts";
import type { Writer } from "./writer.ts";

/** Characters Discord's Markdown would read as formatting anywhere in a line. */
const SPECIAL = /[\\*_~`|[\]]/g;

const LOOKS_LIKE_URL = /[a-z][a-z0-9+.-]*:\/\/|\bwww\./i;

/** Makes `@everyone` and `@here` inert even if a message went out without `allowed_mentions`. */
function defuseMentions(s: string): string {
  return s.replace(/@(everyone|here)/gi, "@\u200b$1");
}

/** Escapes what would start a heading, quote, list or subtext at the start of a line. */
function escapeLineStart(s: string): string {
  const m = /^([ \t]*)(?:([#>+-])|(\d{1,9})([.)]))/.exec(s);
  if (!m) return s;
  // Before the sign, or before the `.` / `)` that follows a number: both the match's last character.
  const at = m[0].length - 1;
  return `${s.slice(0, at)}\\${s.slice(at)}`;
}

function escapeDiscord(s: string, atLineStart: boolean): string {
  const out = defuseMentions(s.replace(SPECIAL, "\\$&"));
  return atLineStart ? escapeLineStart(out) : out;
}

const style: MarkerStyle = {
  bold: "**",
  italic: "*",
  strike: "~~",
  text: escapeDiscord,
  bare: (s) => s,
  code(s) {
    if (s.trim() === "") return null;
    if (!s.includes("`")) return `\`${s}\``;
    if (!s.includes("``") && !s.startsWith("`") && !s.endsWith("`")) return `\`\` ${s} \`\``;
    return null;
  },
  // Discord refuses a masked link whose label looks like another URL: write both out instead.
  link: (label, url) =>
    LOOKS_LIKE_URL.test(label)
      ? `${escapeDiscord(label, false)} (${url})`
      : `[${escapeDiscord(label, false)}](${url.replace(/[()<> ]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)})`,
  quote: () => "> ",
  heading: (level) => (level <= 3 ? `${"#".repeat(level)} ` : null),
  wordBoundaries: false,
};

/** Discord Markdown: `**`, `*`, `~~`, `` ` ``, fences with language, `>` quotes, `#` headings, `[t](u)`. */
export const discordWriter: Writer = {
  entities: false,
  codeFrame: (lang) => ({ open: `\`\`\`${lang}\n`, close: "\n```" }),
  codeLine: (text) => text.replace(/```/g, "``\u200b`"),
  line: (line) => markerLine(line, style),
};

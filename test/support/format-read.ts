import type { Dialect, RenderedPart, TelegramEntity } from "../../workers/format/index.ts";

/**
 * Readers that undo a dialect's formatting, giving the text a user reads (links as
 * `label (url)`, like renderPlain). They assume the text itself holds no literal formatting
 * characters (`*`, `_`, `~`, backticks, brackets), which the tests' inputs guarantee.
 */
export function visibleText(part: RenderedPart, dialect: Dialect): string {
  if (dialect === "telegram") return telegramVisible(part.text, part.entities ?? []);
  if (dialect === "slack") return fenced(part.text, slackLine, (l) => unescapeSlack(l.replace(/\u200b/g, "")));
  if (dialect === "discord") return fenced(part.text, discordLine, (l) => l.replace(/\u200b/g, ""));
  if (dialect === "whatsapp") return fenced(part.text, whatsappLine, (l) => l.replace(/\u200b/g, ""));
  return part.text;
}

function telegramVisible(text: string, entities: readonly TelegramEntity[]): string {
  let out = text;
  const links = entities.filter((e) => e.type === "text_link").sort((a, b) => b.offset - a.offset);
  for (const e of links) out = `${out.slice(0, e.offset + e.length)} (${e.url})${out.slice(e.offset + e.length)}`;
  return out;
}

/** Splits off fenced code (fences are always whole lines in our output). */
function fenced(text: string, line: (l: string) => string, code: (l: string) => string): string {
  let inCode = false;
  const out: string[] = [];
  for (const l of text.split("\n")) {
    if (!inCode && /^```[\w#+.-]*$/.test(l)) inCode = true;
    else if (inCode && l === "```") inCode = false;
    else out.push(inCode ? code(l) : line(l));
  }
  return out.join("\n");
}

const unescapeSlack = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

function slackLine(line: string): string {
  const l = line === ">" ? "" : line.startsWith("> ") ? line.slice(2) : line;
  return l
    .replace(/<([^|>]+)\|([^>]*)>|`([^`]*)`|[*_~\u200b]/g, (_, url?: string, label?: string, code?: string) => {
      if (url !== undefined) return `${label} (${url.replace(/%7C/g, "|")})`;
      return code ?? "";
    })
    .replace(/&lt;|&gt;|&amp;/g, unescapeSlack);
}

/** WhatsApp: quotes, `*` `_` `~` markers, inline code; links are already `label (url)`. */
function whatsappLine(line: string): string {
  const l = line.startsWith("> ") ? line.slice(2) : line;
  return l.replace(/`([^`]*)`|[*_~\u200b]/g, (_, code?: string) => code ?? "");
}

const unescapeDiscord = (s: string) => s.replace(/\\([^A-Za-z0-9\s])/g, "$1");

function discordLine(line: string): string {
  const l = (line.startsWith("> ") ? line.slice(2) : line).replace(/^#{1,3} /, "");
  return l.replace(
    /\\([^A-Za-z0-9\s])|\[((?:\\.|[^\]\\])*)\]\(([^)\s]*)\)|`` (.*?) ``|`([^`]*)`|\*\*|\*|~~|\u200b/g,
    (m, esc?: string, label?: string, url?: string, code2?: string, code1?: string) => {
      if (esc !== undefined) return esc;
      if (label !== undefined)
        return `${unescapeDiscord(label).replace(/\u200b/g, "")} (${url!.replace(/%(28|29|3C|3E|20)/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))})`;
      return code2 ?? code1 ?? "";
    },
  );
}

/**
 * Whether `parts` laid end to end make `whole` with nothing lost and nothing repeated, where
 * the only text allowed to go missing is whitespace at a cut (before a part, or at the end).
 */
export function joinsTo(parts: readonly string[], whole: string): boolean {
  let pos = 0;
  for (const part of parts) {
    while (!whole.startsWith(part, pos) && pos < whole.length && /\s/.test(whole[pos]!)) pos++;
    if (!whole.startsWith(part, pos)) return false;
    pos += part.length;
  }
  return whole.slice(pos).trim() === "";
}

/** Problems with a Telegram part's entities (empty when they are valid). */
export function entityProblems(part: RenderedPart): string[] {
  const es = part.entities ?? [];
  const problems: string[] = [];
  for (const e of es) {
    if (e.length <= 0 || e.offset < 0 || e.offset + e.length > part.text.length) problems.push(`out of bounds: ${JSON.stringify(e)}`);
    if (e.type === "text_link" && !/^https?:\/\//.test(e.url ?? "")) problems.push(`bad url: ${JSON.stringify(e)}`);
  }
  for (const a of es) {
    for (const b of es) {
      if (a === b) continue;
      const aEnd = a.offset + a.length;
      const bEnd = b.offset + b.length;
      const overlap = a.offset < bEnd && b.offset < aEnd;
      const aHoldsB = a.offset <= b.offset && bEnd <= aEnd;
      const bHoldsA = b.offset <= a.offset && aEnd <= bEnd;
      if (overlap && !aHoldsB && !bHoldsA) problems.push(`partial overlap: ${JSON.stringify(a)} ${JSON.stringify(b)}`);
      if (overlap && aHoldsB && (a.type === "code" || a.type === "pre") && !bHoldsA) problems.push(`${a.type} contains ${b.type}`);
      if (overlap && a.type === "blockquote" && b.type === "blockquote") problems.push("nested blockquote");
    }
  }
  return problems;
}

/** Whether a Slack or Discord part closes every fence it opens (an even number of ```). */
export function fencesBalanced(text: string): boolean {
  return (text.match(/```/g) ?? []).length % 2 === 0;
}

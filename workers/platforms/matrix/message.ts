import type { Attachment } from "../types.ts";
import { MXC } from "./ids.ts";
import type { MessageContent } from "./schema.ts";

/** Message types whose `url` is a file the bot can fetch. */
const MEDIA: Record<string, Attachment["kind"]> = { "m.image": "image", "m.file": "document", "m.audio": "audio", "m.video": "video" };

/**
 * A reply's fallback quote removed (spec "Rich replies: fallbacks"): leading `> ` lines of
 * `body` up to the first blank line, and `<mx-reply>…</mx-reply>` of `formatted_body`.
 * Replies without a fallback (MSC2781) are left as they are.
 */
export function stripReplyFallback(body: string, html: string | null): { body: string; html: string | null; quoted: string | null } {
  let quoted: string | null = null;
  let text = body;
  if (/^> /.test(body)) {
    const lines = body.split("\n");
    let i = 0;
    while (i < lines.length && /^>( |$)/.test(lines[i] ?? "")) i++;
    if (i < lines.length && lines[i] === "") {
      quoted = lines.slice(0, i).join("\n");
      text = lines.slice(i + 1).join("\n");
    }
  }
  const stripped = html === null ? null : html.replace(/<mx-reply>[\s\S]*?<\/mx-reply>/gi, "");
  return { body: text, html: stripped, quoted };
}

/** `https://matrix.to/#/<id>` links in HTML (pills), the ids decoded (`%40bot%3Aserver` too), with their labels. */
export function pills(html: string): Array<{ id: string; label: string }> {
  const out: Array<{ id: string; label: string }> = [];
  const re = /<a\s[^>]*href\s*=\s*["']https:\/\/matrix\.to\/#\/([^"'?/]+)[^"']*["'][^>]*>([\s\S]*?)<\/a>/gi;
  for (let m = re.exec(html); m !== null; m = re.exec(html)) {
    let id = m[1] ?? "";
    try {
      id = decodeURIComponent(id);
    } catch {
      continue;
    }
    out.push({ id, label: (m[2] ?? "").replace(/<[^>]*>/g, "").trim() });
  }
  return out;
}

/** Whether a message mentions `bot`: `m.mentions.user_ids`, a pill in `formatted_body`, or the bare user id in `body`. */
export function mentionsBot(c: MessageContent, html: string | null, body: string, bot: string): boolean {
  const lower = bot.toLowerCase();
  if (c["m.mentions"]?.user_ids?.some((u) => u.toLowerCase() === lower)) return true;
  if (html !== null && pills(html).some((p) => p.id.toLowerCase() === lower)) return true;
  return body.toLowerCase().includes(lower);
}

/**
 * Whether a reply answers the bot, from its fallback: the quote's first line names the
 * original sender (`> <@bot:server> …`), or the `<mx-reply>` links to the bot.
 */
export function repliesToBot(quoted: string | null, rawHtml: string | null, bot: string): boolean {
  const lower = bot.toLowerCase();
  if (quoted !== null && quoted.toLowerCase().startsWith(`> <${lower}>`)) return true;
  const reply = rawHtml === null ? null : /<mx-reply>([\s\S]*?)<\/mx-reply>/i.exec(rawHtml)?.[1];
  return reply !== undefined && reply !== null && pills(reply).some((p) => p.id.toLowerCase() === lower);
}

/** The text addressed to the bot: its pill label or user id at the start (`Hermes: …`, `@hermes:example.org …`) removed. */
export function withoutMention(body: string, html: string | null, bot: string): string {
  const labels = [
    bot,
    ...(html === null
      ? []
      : pills(html)
          .filter((p) => p.id.toLowerCase() === bot.toLowerCase())
          .map((p) => p.label)),
  ].filter(Boolean);
  for (const label of labels) {
    if (body.toLowerCase().startsWith(label.toLowerCase())) return body.slice(label.length).replace(/^[\s:,]+/, "");
  }
  return body.split(bot).join("").trim();
}

/** The words and files of a message; null when it is no turn (a type the bot does not read, an empty body). */
export function contentOf(c: MessageContent, body: string): { text: string; attachments: Attachment[] } | null {
  const type = c.msgtype ?? "";
  if (type === "m.text") return body.trim() === "" ? null : { text: body, attachments: [] };
  if (type === "m.emote") return body.trim() === "" ? null : { text: `* ${body}`, attachments: [] };
  if (type === "m.location") return { text: `📍 Shared a location${body ? `: ${body}` : ""}${c.geo_uri ? ` (${c.geo_uri})` : ""}`, attachments: [] };
  const kind = MEDIA[type];
  if (kind === undefined || !c.url || !MXC.test(c.url)) return null;
  // Since spec v1.10 `filename` names the file and `body` is a caption; before, `body` was the file name.
  const caption = c.filename && body !== c.filename ? body : "";
  const voice = kind === "audio" && c["org.matrix.msc3245.voice"] !== undefined;
  const attachment: Attachment = {
    kind: voice ? "voice" : kind,
    name: c.filename ?? (body || null),
    mime: c.info?.mimetype ?? null,
    size: c.info?.size ?? null,
    ...(c.info?.duration !== undefined ? { seconds: Math.round(c.info.duration / 1000) } : {}),
    ref: c.url,
  };
  return { text: caption, attachments: [attachment] };
}

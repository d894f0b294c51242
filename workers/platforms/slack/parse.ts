import { checkJson, malformed } from "../boundary.ts";
import { isCommandName, type Attachment, type ChatType, type Ingest, type PlatformEvent, type SessionSource } from "../types.ts";
import { slackTarget, slackTargets } from "./target.ts";
import { SlackEnvelope, type SlackEvent } from "./schema.ts";

/** The slash command this app registers: `/hermes stop`, `/hermes resume abc`, `/hermes <a prompt>`. */
export const SLACK_SLASH_COMMAND = "/hermes";

/** Message subtypes that are a person talking: a file with text, a thread reply also sent to the channel. */
const HUMAN_SUBTYPES = new Set(["file_share", "thread_broadcast"]);
/** Users that are Slack itself (Slackbot, system notices): never answered, never refused. */
const SLACK_ITSELF = new Set(["USLACKBOT", "USLACK"]);

function chatTypeOf(channelType: string | undefined, channel: string): ChatType {
  return channelType === "im" || (!channelType && channel.startsWith("D")) ? "dm" : "group";
}

/**
 * The source of a message: DMs are `dm` (a thread in a DM adds its thread), channels and
 * group DMs are `group`; a thread is its channel plus the thread's root ts. The workspace is
 * the source's scope (part of the session key).
 */
export function slackSource(team: string, channel: string, channelType: string | undefined, user: string, threadTs: string | null): SessionSource {
  return { platform: "slack", scopeId: team || null, chatId: channel, userId: user, chatType: chatTypeOf(channelType, channel), threadId: threadTs };
}

function stripMention(text: string, botUserId: string | null): string {
  if (!botUserId) return text.trim();
  return text
    .replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>`, "g"), "")
    .replace(/[ \t]+/g, " ")
    .trim();
}

function fileOf(f: NonNullable<SlackEvent["files"]>[number]): Attachment {
  const mime = f.mimetype ?? null;
  const kind: Attachment["kind"] = mime?.startsWith("image/")
    ? "image"
    : mime?.startsWith("audio/")
      ? "audio"
      : mime?.startsWith("video/")
        ? "video"
        : "document";
  return { kind, name: f.name ?? null, mime, size: f.size ?? null, ref: f.url_private_download ?? f.url_private ?? "" };
}

/** `stop`, `resume abc` written as `/stop` or `!stop` after a mention, in a DM or a thread. */
function textCommand(text: string): { name: string; args: string } | null {
  const [, name, args] = /^[/!]([a-z]+)\b\s*(.*)$/is.exec(text.trim()) ?? [];
  return name !== undefined && args !== undefined ? { name: name.toLowerCase(), args: args.trim() } : null;
}

function parseSlashCommand(body: string): Ingest {
  const form = new URLSearchParams(body);
  const command = form.get("command");
  const channel = form.get("channel_id");
  const user = form.get("user_id");
  const team = form.get("team_id") ?? "";
  const trigger = form.get("trigger_id");
  if (command !== SLACK_SLASH_COMMAND || !channel || !user || !trigger) return { kind: "ignore", reason: "unknown slash command" };
  const responseUrl = form.get("response_url") ?? "";
  const source = slackSource(team, channel, undefined, user, null);
  const text = (form.get("text") ?? "").trim();
  const [word = "", ...rest] = text.split(/\s+/);
  const base = {
    deliveryId: `slash:${trigger}`,
    messageId: trigger,
    source,
    // Command answers go to the user alone; a prompt's reply is posted in the channel.
    target: slackTarget(channel, null, source.chatType === "dm", /^https:\/\//.test(responseUrl) ? responseUrl : undefined),
    addressed: true as const,
  };
  if (!slackTargets.decode(base.target)) return malformed("channel or response_url the target codec refuses");
  if (text === "") return { kind: "event", event: { ...base, kind: "command", name: "help", args: "" } };
  const name = word.toLowerCase();
  if (isCommandName(name)) return { kind: "event", event: { ...base, kind: "command", name, args: rest.join(" ") } };
  return {
    kind: "event",
    event: { ...base, target: slackTarget(channel, null, source.chatType === "dm"), kind: "message", text, attachments: [], bindsThread: false },
  };
}

/**
 * Parses an Events API delivery (or a slash command). Messages from bots, from this app,
 * from Slack itself and edits are ignored; a channel message that mentions the bot is left
 * to its `app_mention` twin so it is not answered twice.
 */
export function parseSlackBody(body: string, contentType: string): Ingest {
  if (contentType.includes("application/x-www-form-urlencoded")) return parseSlashCommand(body);
  const checked = checkJson(body, SlackEnvelope);
  if (!checked.ok) return malformed(checked.reason);
  const env = checked.value;
  if (env.type === "url_verification") return { kind: "respond", response: Response.json({ challenge: String(env.challenge ?? "") }) };
  if (env.type !== "event_callback" || !env.event || !env.event_id) return { kind: "ignore", reason: "unsupported payload type" };
  const ev = env.event;
  const botUserId = env.authorizations?.find((a) => a.is_bot !== false)?.user_id ?? null;
  if (ev.subtype && !HUMAN_SUBTYPES.has(ev.subtype)) return { kind: "ignore", reason: `subtype ${ev.subtype}` };
  if (ev.bot_id || !ev.user || ev.user === botUserId || SLACK_ITSELF.has(ev.user)) return { kind: "ignore", reason: "not a person's new message" };
  if (ev.type !== "message" && ev.type !== "app_mention") return { kind: "ignore", reason: `unsupported event ${ev.type}` };
  if (!ev.channel || !ev.ts) return { kind: "ignore", reason: "incomplete event" };
  const team = env.team_id ?? ev.team ?? "";
  const isDm = chatTypeOf(ev.channel_type, ev.channel) === "dm";
  const raw = ev.text ?? "";
  const mentions = botUserId !== null && raw.includes(`<@${botUserId}`);
  if (ev.type === "message" && mentions && !isDm) return { kind: "ignore", reason: "answered as app_mention" };
  // In channels the bot answers in a thread: a top-level mention opens one on itself.
  const thread = ev.thread_ts ?? (!isDm && ev.type === "app_mention" ? ev.ts : null);
  const source = slackSource(team, ev.channel, ev.channel_type, ev.user, thread);
  const text = stripMention(raw, botUserId);
  const attachments = (ev.files ?? []).map(fileOf).filter((a) => a.ref !== "");
  if (text === "" && attachments.length === 0) return { kind: "ignore", reason: "nothing in it" };
  const target = slackTarget(ev.channel, thread, isDm);
  if (!slackTargets.decode(target)) return malformed("channel or thread ts the target codec refuses");
  const base = { deliveryId: env.event_id, messageId: ev.ts, source, target, addressed: isDm || ev.type === "app_mention" };
  const cmd = textCommand(text);
  let event: PlatformEvent;
  if (cmd && isCommandName(cmd.name)) event = { ...base, kind: "command", name: cmd.name, args: cmd.args };
  // The thread a channel mention is in (or opens) then goes on without mentions.
  else event = { ...base, kind: "message", text, attachments, bindsThread: !isDm && ev.type === "app_mention" };
  return { kind: "event", event };
}

import { checkJson, malformed } from "../boundary.ts";
import type { ChatType, Intake, InboundMessage, SessionSource } from "../types.ts";
import { SlackEnvelope } from "./schema.ts";

/** The slash command this app registers: `/hermes stop`, `/hermes resume abc`, … */
export const SLACK_SLASH_COMMAND = "/hermes";

function chatTypeOf(channelType: string | undefined, channel: string): ChatType {
  return channelType === "im" || (!channelType && channel.startsWith("D")) ? "dm" : "group";
}

/**
 * The source of a message: DMs are `dm` (a thread in a DM adds its thread), channels and
 * group DMs are `group`; a thread is its channel plus the thread's root ts.
 */
export function slackSource(team: string, channel: string, channelType: string | undefined, user: string, threadTs: string | null): SessionSource {
  return { platform: "slack", workspaceId: team, chatId: channel, userId: user, chatType: chatTypeOf(channelType, channel), threadId: threadTs };
}

function stripMention(text: string, botUserId: string | null): string {
  if (!botUserId) return text.trim();
  return text.replace(new RegExp(`<@${botUserId}(\\|[^>]*)?>`, "g"), "").replace(/\s+/g, " ").trim();
}

/** `stop`, `resume abc` typed after a mention or in a DM, written as `/stop` or `!stop`. */
function textCommand(text: string): { name: string; args: string } | null {
  const m = /^[/!](stop|new|resume|sethome|help)\b\s*(.*)$/is.exec(text.trim());
  return m ? { name: m[1]!.toLowerCase(), args: m[2]!.trim() } : null;
}

function parseSlashCommand(body: string): Intake {
  const form = new URLSearchParams(body);
  const command = form.get("command");
  const channel = form.get("channel_id");
  const user = form.get("user_id");
  const team = form.get("team_id");
  const trigger = form.get("trigger_id");
  if (command !== SLACK_SLASH_COMMAND || !channel || !user || !team || !trigger) return { kind: "ignore", reason: "unknown slash command" };
  const [name = "help", ...rest] = (form.get("text") ?? "").trim().split(/\s+/);
  const source = slackSource(team, channel, undefined, user, null);
  const message: InboundMessage = {
    deliveryId: `slash:${trigger}`,
    messageId: trigger,
    text: `/${name} ${rest.join(" ")}`.trim(),
    source,
    addressed: true,
    command: { name: name.toLowerCase(), args: rest.join(" ") },
    target: { platform: "slack", chatId: channel, threadId: null, isPrivate: source.chatType === "dm" },
  };
  return { kind: "message", message };
}

/**
 * Parses an Events API delivery (or a slash command). Messages from bots, from this app
 * and edits are ignored; a channel message that mentions the bot is left to its
 * `app_mention` twin so it is not answered twice.
 */
export function parseSlackBody(body: string, contentType: string): Intake {
  if (contentType.includes("application/x-www-form-urlencoded")) return parseSlashCommand(body);
  const checked = checkJson(body, SlackEnvelope);
  if (!checked.ok) return malformed(checked.reason);
  const env = checked.value;
  if (env.type === "url_verification") {
    return { kind: "respond", response: Response.json({ challenge: String(env.challenge ?? "") }) };
  }
  if (env.type !== "event_callback" || !env.event || !env.event_id) return { kind: "ignore", reason: "unsupported payload type" };
  const ev = env.event;
  const botUserId = env.authorizations?.find((a) => a.is_bot !== false)?.user_id ?? null;
  if (ev.bot_id || ev.subtype || !ev.user || ev.user === botUserId) return { kind: "ignore", reason: "not a person's new message" };
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
  if (text === "") return { kind: "ignore", reason: "no text" };
  const message: InboundMessage = {
    deliveryId: env.event_id,
    messageId: ev.ts,
    text,
    source,
    addressed: isDm || ev.type === "app_mention",
    command: textCommand(text),
    target: { platform: "slack", chatId: ev.channel, threadId: thread, isPrivate: isDm },
  };
  return { kind: "message", message };
}

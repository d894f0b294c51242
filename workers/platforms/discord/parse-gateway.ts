import * as z from "zod";
import { isCommandName, type PlatformEvent, type SessionSource } from "../types.ts";
import { attachment } from "./parse.ts";
import { DiscordAttachment, DiscordUser } from "./schema.ts";
import { discordTarget } from "./target.ts";

/**
 * A Gateway `MESSAGE_CREATE` as our neutral event
 * (https://discord.com/developers/docs/events/gateway-events#message-create, the message
 * object at https://discord.com/developers/docs/resources/message#message-object). Keys
 * are those of interactions (`discordSource`) and of `destination()`: a DM on its channel,
 * a server channel per user, a thread on the thread itself, so a handoff thread's messages
 * reach the session handed off there.
 */

const opt = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v): z.output<T> | undefined => v ?? undefined);
const snowflake = z.lazy(() => z.string().regex(/^[\w-]{1,64}$/));

const GatewayMessage = z.lazy(() =>
  z.object({
    id: snowflake,
    channel_id: snowflake,
    guild_id: opt(snowflake),
    /** The channel's type, which MESSAGE_CREATE carries (when it does, no look-up is needed to tell a thread). */
    channel_type: opt(z.number().int()),
    type: opt(z.number().int()),
    content: opt(z.string()),
    author: DiscordUser,
    webhook_id: opt(snowflake),
    mentions: opt(z.array(z.object({ id: snowflake }))),
    referenced_message: opt(z.object({ author: opt(z.object({ id: snowflake })) })),
    attachments: opt(z.array(DiscordAttachment)),
  }),
);
type GatewayMessage = z.infer<typeof GatewayMessage>;

/** Message types that are something a person wrote: DEFAULT (0) and REPLY (19); joins, pins, thread notices are not. */
const PERSON_TYPES = new Set([0, 19]);

/** What the connection knows when it reads a message: the bot's own user id, and whether the channel is a thread. */
export interface GatewayContext {
  botUserId: string | null;
  isThread: boolean;
}

export type GatewayMessageResult = { kind: "event"; event: PlatformEvent } | { kind: "ignore"; reason: string };

/** The parts of a message the connection reads before deciding how to parse it (its channel may need a look-up). */
export function messageHeader(data: unknown): { channelId: string; guildId: string | null; channelType: number | null; fromBot: boolean } | null {
  const m = GatewayMessage.safeParse(data);
  if (!m.success) return null;
  const { channel_id, guild_id, channel_type, author, webhook_id } = m.data;
  return { channelId: channel_id, guildId: guild_id ?? null, channelType: channel_type ?? null, fromBot: author.bot === true || webhook_id !== undefined };
}

/** `/stop`, `!stop`, `/resume abc`: a command of the table typed as a message. */
function textCommand(text: string): { name: string; args: string } | null {
  const [, name, args] = /^[/!]([a-z]+)\b\s*(.*)$/is.exec(text.trim()) ?? [];
  return name !== undefined && args !== undefined ? { name: name.toLowerCase(), args: args.trim() } : null;
}

function mentionsBot(m: GatewayMessage, bot: string): boolean {
  return (m.mentions ?? []).some((u) => u.id === bot) || m.content?.includes(`<@${bot}>`) === true || m.content?.includes(`<@!${bot}>`) === true;
}

function sourceOf(m: GatewayMessage, isThread: boolean): SessionSource {
  const user = {
    platform: "discord" as const,
    userId: m.author.id,
    userName: m.author.global_name ?? m.author.username ?? null,
    userHandle: m.author.username ?? null,
  };
  if (!m.guild_id) return { ...user, chatType: "dm", chatId: m.channel_id, threadId: null };
  if (isThread) return { ...user, chatType: "thread", chatId: m.channel_id, threadId: m.channel_id };
  return { ...user, chatType: "group", chatId: m.channel_id, threadId: null };
}

/**
 * Parses a MESSAGE_CREATE. Ignored: bots (this one included) and webhooks, messages that are
 * not a person's (joins, pins), and empty ones. Addressed: every DM; in a server, a mention
 * of the bot or a reply to it. Other messages in a thread go on unaddressed: the thread's
 * Inbox takes them only when the thread is bound to a session (a handoff thread).
 */
export function parseGatewayMessage(data: unknown, ctx: GatewayContext): GatewayMessageResult {
  const checked = GatewayMessage.safeParse(data);
  if (!checked.success) return { kind: "ignore", reason: `unexpected message at ${checked.error.issues[0]?.path.join(".") ?? "body"}` };
  const m = checked.data;
  if (m.author.bot || m.webhook_id !== undefined || (ctx.botUserId !== null && m.author.id === ctx.botUserId)) return { kind: "ignore", reason: "from a bot" };
  if (m.type !== undefined && !PERSON_TYPES.has(m.type)) return { kind: "ignore", reason: `message type ${m.type}` };
  const bot = ctx.botUserId;
  const toBot = bot !== null && (mentionsBot(m, bot) || m.referenced_message?.author?.id === bot);
  const source = sourceOf(m, ctx.isThread);
  const addressed = source.chatType === "dm" || toBot;
  if (!addressed && !source.threadId) return { kind: "ignore", reason: "not for the bot" };
  const raw = m.content ?? "";
  const text = (bot ? raw.replace(new RegExp(`<@!?${bot}>`, "g"), "") : raw).replace(/[ \t]+/g, " ").trim();
  const attachments = (m.attachments ?? []).map(attachment).filter((a) => a.ref !== "");
  if (text === "" && attachments.length === 0) return { kind: "ignore", reason: "nothing to read (is Message Content Intent on?)" };
  const target = discordTarget(m.channel_id, source.threadId ?? null, source.chatType === "dm", undefined, m.id);
  const base = { deliveryId: m.id, messageId: m.id, source, target, addressed };
  const command = attachments.length === 0 ? textCommand(text) : null;
  if (command && isCommandName(command.name)) return { kind: "event", event: { ...base, kind: "command", name: command.name, args: command.args } };
  return { kind: "event", event: { ...base, kind: "message", text, attachments, bindsThread: false } };
}

import { InteractionResponseFlags, InteractionResponseType, InteractionType } from "discord-interactions";
import { checkJson } from "../boundary.ts";
import type { Intake, InboundMessage, SessionSource } from "../types.ts";
import { DiscordInteraction, type DiscordUser } from "./schema.ts";

/** Thread channel types: announcement, public and private threads. */
const THREAD_TYPES = new Set([10, 11, 12]);

type Interaction = DiscordInteraction;

/** The slash commands this bot registers (see setup). `ask` carries a message; the rest are chat commands. */
export const DISCORD_COMMANDS = [
  { name: "ask", description: "Talk to the agent", options: [{ type: 3, name: "prompt", description: "Your message", required: true }] },
  { name: "stop", description: "Stop the reply that is running in this chat" },
  { name: "new", description: "Start a fresh session here" },
  { name: "resume", description: "Continue an earlier session here", options: [{ type: 3, name: "session", description: "Session id or title (empty: list recent)", required: false }] },
  { name: "sethome", description: "Make this chat the home channel for handoffs" },
  { name: "help", description: "What this bot can do" },
] as const;

const ephemeral = (content: string) =>
  Response.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content, flags: InteractionResponseFlags.EPHEMERAL } });

/**
 * The source of an interaction: a DM, a guild channel (a group, per user), or a thread,
 * keyed on the thread's own id as both chat and thread (one shared session per thread).
 */
export function discordSource(i: Pick<Interaction, "guild_id" | "channel_id" | "channel">, user: DiscordUser): SessionSource {
  const channelId = i.channel?.id ?? i.channel_id ?? "";
  const base = { platform: "discord" as const, userId: user.id, userName: user.global_name ?? user.username ?? null };
  if (!i.guild_id) return { ...base, chatType: "dm", chatId: channelId, threadId: null };
  if (i.channel && THREAD_TYPES.has(i.channel.type)) {
    return { ...base, chatType: "thread", chatId: channelId, threadId: channelId };
  }
  return { ...base, chatType: "group", chatId: channelId, threadId: null };
}

/** Parses an interaction: PING → PONG, application commands → messages or chat commands. */
export function parseDiscordInteraction(body: string): Intake {
  const checked = checkJson(body, DiscordInteraction);
  // Discord does not retry interactions: a malformed one is answered 400 (and logged).
  if (!checked.ok) return { kind: "respond", response: Response.json({ error: { code: "bad_request", message: checked.reason } }, { status: 400 }), malformed: checked.reason };
  const i = checked.value;
  if (i.type === InteractionType.PING) return { kind: "respond", response: Response.json({ type: InteractionResponseType.PONG }) };
  if (i.type !== InteractionType.APPLICATION_COMMAND) {
    return { kind: "respond", response: ephemeral("This interaction is not supported; use /ask.") };
  }
  const user = i.member?.user ?? i.user;
  const name = i.data?.name?.toLowerCase();
  if (!user || !name || !i.id || !i.token) return { kind: "ignore", reason: "incomplete interaction" };
  if (user.bot) return { kind: "ignore", reason: "from a bot" };
  const option = (n: string) => {
    const v = i.data?.options?.find((o) => o.name === n)?.value;
    return typeof v === "string" ? v : "";
  };
  const source = discordSource(i, user);
  const channelId = source.threadId ?? source.chatId;
  const isAsk = name === "ask";
  const text = isAsk ? option("prompt") : `/${name}${name === "resume" && option("session") ? ` ${option("session")}` : ""}`;
  if (isAsk && text.trim() === "") return { kind: "respond", response: ephemeral("Give /ask a prompt.") };
  const message: InboundMessage = {
    deliveryId: i.id,
    messageId: i.id,
    text,
    source,
    addressed: true,
    command: isAsk ? null : { name, args: name === "resume" ? option("session") : "" },
    target: {
      platform: "discord",
      chatId: channelId,
      threadId: source.threadId ?? null,
      isPrivate: source.chatType === "dm",
      interaction: { applicationId: i.application_id, token: i.token },
    },
  };
  return { kind: "message", message };
}

/** The immediate answer to a command that will be answered later: "thinking…". */
export function deferredResponse(): Response {
  return Response.json({ type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE });
}

/**
 * The immediate answer that is itself the reply: commands, refusals, notes. Ephemeral (only
 * the user who typed the command sees it): session lists and refusals are nobody else's.
 */
export function inlineResponse(content: string): Response {
  return Response.json({ type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE, data: { content, flags: InteractionResponseFlags.EPHEMERAL } });
}

import { checkJson, malformed } from "../boundary.ts";
import type { ChatCommand, Intake, InboundMessage, SessionSource } from "../types.ts";
import { TelegramUpdate, type TelegramEntity as MessageEntity, type TelegramMessage as Message } from "./schema.ts";

/** What parsing needs to know about the bot. */
export interface TelegramBotIdentity {
  id: number;
  username: string;
}

function entityText(text: string, e: MessageEntity): string {
  return text.slice(e.offset, e.offset + e.length);
}

/** A leading `/command` or `/command@bot`; null if absent or addressed to another bot. */
function commandOf(text: string, entities: readonly MessageEntity[], bot: TelegramBotIdentity): ChatCommand | null | "other-bot" {
  const first = entities.find((e) => e.type === "bot_command" && e.offset === 0);
  if (!first) return null;
  const raw = entityText(text, first).slice(1);
  const [name = "", at] = raw.split("@");
  if (at && at.toLowerCase() !== bot.username.toLowerCase()) return "other-bot";
  return { name: name.toLowerCase(), args: text.slice(first.length).trim() };
}

function mentionsBot(text: string, entities: readonly MessageEntity[], bot: TelegramBotIdentity): boolean {
  return entities.some(
    (e) =>
      (e.type === "mention" && entityText(text, e).toLowerCase() === `@${bot.username.toLowerCase()}`) ||
      (e.type === "text_mention" && e.user?.id === bot.id),
  );
}

/** A reply to one of the bot's messages (not the topic's opening service message). */
function repliesToBot(msg: Message, bot: TelegramBotIdentity): boolean {
  const r = msg.reply_to_message;
  if (!r || r.from?.id !== bot.id) return false;
  return !(msg.is_topic_message && r.message_id === msg.message_thread_id && r.forum_topic_created);
}

/** The forum's General topic has no message_thread_id; it is keyed as topic "1". */
export const GENERAL_TOPIC = "1";

/**
 * The source of a message: private chats are DMs keyed on the chat (a private-chat topic
 * adds its thread), groups are groups, and a forum topic is its group plus the topic as
 * thread (shared by everyone in it; the General topic is thread "1").
 */
export function telegramSource(chat: { id: number; type: string; is_forum?: boolean }, threadId: number | undefined, from: { id: number; username?: string; first_name?: string } | undefined): SessionSource | null {
  if (chat.type === "channel") return null;
  const userId = from ? String(from.id) : String(chat.id);
  const userName = from?.username ?? from?.first_name ?? null;
  const base = { platform: "telegram" as const, chatId: String(chat.id), userId, userName };
  if (chat.type === "private") return { ...base, chatType: "dm", threadId: threadId !== undefined ? String(threadId) : null };
  const topic = threadId !== undefined ? String(threadId) : chat.is_forum ? GENERAL_TOPIC : null;
  return { ...base, chatType: "group", threadId: topic };
}

/** Parses a Telegram update into the neutral intake. */
export function parseTelegramUpdate(body: string, bot: TelegramBotIdentity): Intake {
  const checked = checkJson(body, TelegramUpdate);
  if (!checked.ok) return malformed(checked.reason);
  const update = checked.value;
  const msg = update.message;
  if (!msg) return { kind: "ignore", reason: "unsupported update type" };
  if (!msg.from || msg.from.is_bot) return { kind: "ignore", reason: "not from a person" };
  const text = msg.text ?? msg.caption;
  if (!text || text.trim() === "") return { kind: "ignore", reason: "no text" };
  const entities = msg.entities ?? msg.caption_entities ?? [];
  const threadId = msg.is_topic_message ? msg.message_thread_id : undefined;
  const source = telegramSource(msg.chat, threadId, msg.from);
  if (!source) return { kind: "ignore", reason: "channel post" };
  const command = commandOf(text, entities, bot);
  if (command === "other-bot") return { kind: "ignore", reason: "command for another bot" };
  const isPrivate = msg.chat.type === "private";
  const mention = new RegExp(`@${bot.username.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "gi");
  const message: InboundMessage = {
    deliveryId: String(update.update_id),
    messageId: String(msg.message_id),
    text: isPrivate ? text : text.replace(mention, "").trim() || text,
    source,
    addressed: isPrivate || command !== null || mentionsBot(text, entities, bot) || repliesToBot(msg, bot),
    command,
    target: {
      platform: "telegram",
      chatId: String(msg.chat.id),
      threadId: source.threadId ?? null,
      isPrivate,
      replyTo: isPrivate ? null : String(msg.message_id),
    },
  };
  return { kind: "message", message };
}

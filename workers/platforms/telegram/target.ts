import * as z from "zod";
import { decimalId, targetCodec } from "../target.ts";
import { PlatformApiError, type ReplyTarget } from "../types.ts";

/** Telegram's General topic: messages in it carry no thread id, and sends must not name one. */
export const GENERAL_TOPIC = "1";

/** Where a Telegram reply goes: a chat, a forum topic in it, and the message answered (groups). */
export interface TelegramTarget {
  /** Private chats are positive ids, groups negative (Telegram ids fit in 52 bits: numbers are exact). */
  chatId: number;
  /** The topic (`message_thread_id`), or null; the General topic is {@link GENERAL_TOPIC}. */
  topic: number | null;
  replyTo: number | null;
  private: boolean;
}

const messageId = z.lazy(() => z.string().regex(/^\d{1,12}$/));

/** The stored ref `{c, t?, r?}` (decimal strings), as ever. */
export const telegramTargets = targetCodec<TelegramTarget, { c: string; t?: string | undefined; r?: string | undefined }>({
  platform: "telegram",
  wire: () => z.strictObject({ c: decimalId(true), t: messageId.optional(), r: messageId.optional() }),
  toWire: (t) => ({ c: String(t.chatId), t: t.topic === null ? null : String(t.topic), r: t.replyTo === null ? null : String(t.replyTo) }),
  fromWire: (w) => ({
    chatId: Number(w.c),
    topic: w.t === undefined ? null : Number(w.t),
    replyTo: w.r === undefined ? null : Number(w.r),
    private: !w.c.startsWith("-"),
  }),
  where: (t) => ({ chatId: String(t.chatId), threadId: t.topic === null ? null : String(t.topic) }),
});

/** The reply target of a chat or topic (`replyTo`: the message answered, in groups); ids that are not Telegram's are refused. */
export function telegramTarget(chatId: string, threadId: string | null, replyTo: string | null): ReplyTarget {
  const t = telegramTargets.fromFields({ c: chatId, t: threadId, r: replyTo }, false);
  if (!t)
    throw new PlatformApiError(
      "telegram",
      "bad_target",
      `"${chatId.slice(0, 40)}"${threadId ? ` (topic ${threadId.slice(0, 20)})` : ""} is not a Telegram chat: use the numeric chat id (e.g. -1001234567890)`,
    );
  return telegramTargets.encode(t);
}

import { checkJson, malformed } from "../boundary.ts";
import { isCommandName, type Addressed, type Attachment, type Ingest, type PlatformEvent, type ReplyTarget, type SessionSource } from "../types.ts";
import { GENERAL_TOPIC, telegramTargets } from "./target.ts";
import { TelegramUpdate, type TelegramEntity, type TelegramMessage } from "./schema.ts";

/** What parsing knows about the bot: its id (from the token) and, when known, its username. */
export interface TelegramBotIdentity {
  id: number;
  username: string | null;
}

/** The forum's General topic has no message_thread_id; it is keyed as topic "1". */
export { GENERAL_TOPIC };

const slice = (text: string, e: TelegramEntity) => text.slice(e.offset, e.offset + e.length);

/**
 * The source of a message: private chats are DMs keyed on the chat (a private-chat topic
 * adds its thread), groups are groups, and a forum topic is its group plus the topic as
 * thread (shared by everyone in it; the General topic is thread "1").
 */
export function telegramSource(
  chat: { id: number; type: string; is_forum?: boolean | undefined },
  threadId: number | undefined,
  from: { id: number; username?: string | undefined; first_name?: string | undefined; last_name?: string | undefined } | undefined,
): SessionSource | null {
  if (chat.type === "channel") return null;
  const userId = from ? String(from.id) : String(chat.id);
  const display = [from?.first_name, from?.last_name].filter((n) => n?.trim()).join(" ");
  const userName = display || from?.username || null;
  const base = { platform: "telegram" as const, chatId: String(chat.id), userId, userName, userHandle: from?.username || null };
  if (chat.type === "private") return { ...base, chatType: "dm", threadId: threadId !== undefined ? String(threadId) : null };
  const topic = threadId !== undefined ? String(threadId) : chat.is_forum ? GENERAL_TOPIC : null;
  return { ...base, chatType: "group", threadId: topic };
}

/** The relay contract's chat type: a topic of a forum group is `forum` there (a private chat's topic stays `dm`). */
export function telegramWireChatType(source: SessionSource): string {
  return source.chatType === "group" && source.threadId ? "forum" : source.chatType;
}

/** A reply to one of the bot's messages (not the topic's opening service message). */
function repliesToBot(msg: TelegramMessage, bot: TelegramBotIdentity): boolean {
  const r = msg.reply_to_message;
  if (!r || r.from?.id !== bot.id) return false;
  return !(msg.is_topic_message && r.message_id === msg.message_thread_id && r.forum_topic_created);
}

/** Entities whose text is not prose: an `@name` inside them addresses nobody. */
const LITERAL = new Set(["code", "pre", "url", "text_link", "email"]);

/** The text with code, links and e-mail addresses blanked out (UTF-16 offsets kept). */
function prose(text: string, entities: readonly TelegramEntity[]): string {
  let out = text;
  for (const e of entities)
    if (LITERAL.has(e.type))
      out = out.slice(0, e.offset) + " ".repeat(Math.max(0, Math.min(e.length, text.length - e.offset))) + out.slice(e.offset + e.length);
  return out;
}

/** `@names` in the prose of a message (typed mentions, with or without a `mention` entity), lower-cased. */
function mentionsIn(text: string): string[] {
  return [...text.matchAll(/(?:^|[^\w@])@([A-Za-z0-9_]{3,32})\b/g)].flatMap((m) => (m[1] === undefined ? [] : [m[1].toLowerCase()]));
}

/** Removes `@name` (any case) where it stands as a word, and the spaces it leaves. */
function stripName(text: string, name: string): string {
  return text
    .replace(new RegExp(`(^|[^\\w@])@${name}\\b`, "gi"), "$1")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

type TelegramFile = NonNullable<TelegramMessage["voice"]>;

/** Photo sizes are not ordered by size in every client's updates: the picture is the largest. */
function largest(sizes: readonly TelegramFile[] | undefined): TelegramFile | undefined {
  const area = (f: TelegramFile) => (f.width ?? 0) * (f.height ?? 0) || (f.file_size ?? 0);
  return sizes?.reduce<TelegramFile | undefined>((best, f) => (!best || area(f) > area(best) ? f : best), undefined);
}

function attachmentsOf(msg: TelegramMessage): Attachment[] {
  const out: Attachment[] = [];
  const add = (kind: Attachment["kind"], f: TelegramFile | undefined | null, fallbackMime: string | null) => {
    if (f)
      out.push({ kind, name: f.file_name ?? null, mime: f.mime_type ?? fallbackMime, size: f.file_size ?? null, seconds: f.duration ?? null, ref: f.file_id });
  };
  add("image", largest(msg.photo), "image/jpeg");
  add("voice", msg.voice, "audio/ogg");
  add("audio", msg.audio, null);
  add("document", msg.document, null);
  add("video", msg.video, "video/mp4");
  add("video", msg.video_note, "video/mp4");
  return out;
}

/**
 * A leading `/command` (`/name@bot args`): from its `bot_command` entity, or, in a private
 * chat whose update has no entities at all (the Bot API's own webhook examples), from the
 * text itself. In groups Telegram always marks commands, so "/tmp is full" there is words.
 */
function leadingCommand(text: string, entities: readonly TelegramEntity[], isPrivate: boolean): { name: string; at: string | null; args: string } | null {
  const entity = entities.find((e) => e.type === "bot_command" && e.offset === 0);
  const word = entity
    ? slice(text, entity)
    : isPrivate && entities.length === 0
      ? /^\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?(?=\s|$)/.exec(text)?.[0]
      : undefined;
  if (!word) return null;
  const [name = "", at] = word.slice(1).split("@");
  return { name: name.toLowerCase(), at: at ? at.toLowerCase() : null, args: text.slice(word.length).trim() };
}

/**
 * Parses a Telegram update into a neutral event. Addressing in groups: a mention of the bot
 * (an entity, or `@bot` typed as plain text, any case), a reply to it, or a command; when
 * the bot's username is not known yet, the `@names` seen are passed on for a check after
 * the webhook is acknowledged. Commands in groups are ours only with `@ourbot` or when we
 * know them; unknown ones are another bot's and ignored (in a DM they get an answer).
 */
export function parseTelegramUpdate(body: string, bot: TelegramBotIdentity): Ingest {
  const checked = checkJson(body, TelegramUpdate);
  if (!checked.ok) return malformed(checked.reason);
  const update = checked.value;
  const msg = update.message;
  if (!msg) return { kind: "ignore", reason: "unsupported update type" };
  if (!msg.from || msg.from.is_bot) return { kind: "ignore", reason: "not from a person" };
  // A message has a text or, with a file, a caption (never both).
  const captioned = !msg.text && msg.caption !== undefined;
  const text = (captioned ? msg.caption : msg.text) ?? "";
  const entities = (captioned ? msg.caption_entities : msg.entities) ?? [];
  const attachments = attachmentsOf(msg);
  if (text.trim() === "" && attachments.length === 0) return { kind: "ignore", reason: "nothing in it" };
  const threadId = msg.is_topic_message ? msg.message_thread_id : undefined;
  const source = telegramSource(msg.chat, threadId, msg.from);
  if (!source) return { kind: "ignore", reason: "channel post" };
  const isPrivate = msg.chat.type === "private";
  const me = bot.username?.toLowerCase() ?? null;
  // Ids the target codec refuses (out of Telegram's range) cannot be answered.
  const where = telegramTargets.fromFields({ c: String(msg.chat.id), t: source.threadId ?? null, r: isPrivate ? null : String(msg.message_id) }, isPrivate);
  if (!where) return malformed("chat, topic or message id out of range");
  const base = { deliveryId: String(update.update_id), messageId: String(msg.message_id), source, target: telegramTargets.encode(where) };

  const cmd = leadingCommand(text, entities, isPrivate);
  if (cmd) {
    const { name, at, args } = cmd;
    if (at && me && at !== me) return { kind: "ignore", reason: "command for another bot" };
    const ours = name === "start" ? "help" : name;
    // `/cmd@x` while our own username is not known yet: checked after the acknowledgement.
    const addressed: Addressed = at && !me ? { mentions: [at] } : true;
    const event: PlatformEvent = isCommandName(ours)
      ? { ...base, kind: "command", name: ours, args, addressed }
      : { ...base, kind: "unknown_command", name, addressed };
    // In a group a bare command is ours only if we know it (others are other bots').
    if (isPrivate || at || event.kind === "command") return { kind: "event", event };
    return { kind: "ignore", reason: "a command this bot does not have" };
  }

  const typed = mentionsIn(prose(text, entities));
  const entityMention = entities.some((e) => e.type === "text_mention" && e.user?.id === bot.id);
  let addressed: Addressed = isPrivate || entityMention || repliesToBot(msg, bot);
  if (!addressed && typed.length > 0) addressed = me ? typed.includes(me) : { mentions: typed };
  // In a DM the only bot is this one: a leading `@…bot` mention is its handle, not content.
  const dmHandle = isPrivate && !me ? /^@([A-Za-z0-9_]{1,29}bot)\b/i.exec(text)?.[1] : undefined;
  const name = me ?? dmHandle?.toLowerCase() ?? null;
  const said = name ? stripName(text, name) : text.trim();
  // A quoted fragment of the message answered is part of what is asked.
  const quoted = msg.quote?.text.trim() ? `> ${msg.quote.text.trim().replace(/\n/g, "\n> ")}\n\n${said}` : said;
  return {
    kind: "event",
    event: {
      ...base,
      kind: "message",
      text: quoted,
      attachments,
      addressed,
      bindsThread: false,
      ...(msg.media_group_id ? { album: `${msg.chat.id}:${msg.media_group_id}` } : {}),
    },
  };
}

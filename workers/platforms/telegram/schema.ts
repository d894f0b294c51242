import * as z from "zod";

/**
 * The parts of a Telegram Update the Worker reads, validated at the boundary: a correctly
 * signed update of any other shape is ignored (2xx, one log line), never a 5xx that
 * Telegram would retry for hours. Unknown fields are dropped; unknown update types pass
 * (they are ignored later).
 */
const id = z.lazy(() => z.number().int().safe());

export const TelegramUser = z.lazy(() =>
  z.object({
    id,
    is_bot: z.boolean().optional(),
    first_name: z.string().optional(),
    last_name: z.string().optional(),
    username: z.string().optional(),
  }),
);

const Chat = z.lazy(() => z.object({ id, type: z.string(), is_forum: z.boolean().optional(), title: z.string().optional() }));

export const TelegramEntity = z.lazy(() =>
  z.object({
    type: z.string(),
    offset: z.number().int().nonnegative(),
    length: z.number().int().nonnegative(),
    user: TelegramUser.optional(),
  }),
);

const ReplyTo = z.lazy(() =>
  z.object({
    message_id: id,
    from: TelegramUser.optional(),
    forum_topic_created: z.unknown().optional(),
  }),
);

/** A file a message carries (photo sizes, voice, audio, document, video, video note). */
const File = z.lazy(() =>
  z.object({
    file_id: z.string().min(1).max(300),
    file_size: z.number().int().nonnegative().nullish(),
    mime_type: z.string().nullish(),
    file_name: z.string().nullish(),
    width: z.number().int().nonnegative().nullish(),
    height: z.number().int().nonnegative().nullish(),
    /** Voice, audio and video length in seconds. */
    duration: z.number().nonnegative().nullish(),
  }),
);

export const TelegramMessage = z.lazy(() =>
  z.object({
    message_id: id,
    chat: Chat,
    from: TelegramUser.optional(),
    text: z.string().optional(),
    caption: z.string().optional(),
    entities: z.array(TelegramEntity).optional(),
    caption_entities: z.array(TelegramEntity).optional(),
    is_topic_message: z.boolean().optional(),
    message_thread_id: id.optional(),
    reply_to_message: ReplyTo.optional(),
    /** The part of the replied message this one quotes (Bot API 7.0). */
    quote: z.object({ text: z.string() }).nullish(),
    photo: z.array(File).optional(),
    voice: File.optional(),
    audio: File.optional(),
    document: File.optional(),
    video: File.optional(),
    video_note: File.optional(),
    /** Set on each message of an album (photos or files sent together), the same on all of them. */
    media_group_id: z.string().max(200).optional(),
  }),
);

export const TelegramUpdate = z.lazy(() =>
  z.object({
    update_id: id,
    message: TelegramMessage.optional(),
  }),
);

export type TelegramUpdate = z.infer<typeof TelegramUpdate>;
export type TelegramMessage = z.infer<typeof TelegramMessage>;
export type TelegramEntity = z.infer<typeof TelegramEntity>;

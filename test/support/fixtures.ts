/**
 * Payloads in the shapes the platforms document (Telegram Update, Discord Interaction,
 * Slack Events API and slash commands), trimmed to the fields that matter.
 */
import { DISCORD_TEST, SLACK_TEST, TELEGRAM_TEST } from "./signing.ts";

let seq = 1000;
const next = () => ++seq;

export const tg = {
  user: (id: number, username = `user${id}`) => ({ id, is_bot: false, first_name: username, username }),
  /** A private-chat text message. */
  dm(text: string, userId = 1001, extra: Record<string, unknown> = {}) {
    return {
      update_id: next(),
      message: { message_id: next(), date: 1700000000, chat: { id: userId, type: "private", first_name: "u" }, from: tg.user(userId), text, ...extra },
    };
  },
  /** A group message; `mention` adds an @bot mention entity. */
  group(text: string, opts: { userId?: number; chatId?: number; mention?: boolean; replyToBot?: boolean } = {}) {
    const userId = opts.userId ?? 1001;
    const body = opts.mention ? `@${TELEGRAM_TEST.username} ${text}` : text;
    return {
      update_id: next(),
      message: {
        message_id: next(),
        date: 1700000000,
        chat: { id: opts.chatId ?? -100200, type: "supergroup", title: "Team" },
        from: tg.user(userId),
        text: body,
        ...(opts.mention ? { entities: [{ type: "mention", offset: 0, length: TELEGRAM_TEST.username.length + 1 }] } : {}),
        ...(opts.replyToBot
          ? {
              reply_to_message: {
                message_id: 5,
                date: 1,
                chat: { id: opts.chatId ?? -100200, type: "supergroup" },
                from: { id: TELEGRAM_TEST.botId, is_bot: true, first_name: "Hermes" },
                text: "earlier",
              },
            }
          : {}),
      },
    };
  },
  /** A message in a forum topic (no mention). */
  topic(text: string, threadId: number, opts: { userId?: number; chatId?: number } = {}) {
    const chatId = opts.chatId ?? -100300;
    return {
      update_id: next(),
      message: {
        message_id: next(),
        date: 1700000000,
        message_thread_id: threadId,
        is_topic_message: true,
        chat: { id: chatId, type: "supergroup", title: "Forum", is_forum: true },
        from: tg.user(opts.userId ?? 1001),
        text,
        reply_to_message: {
          message_id: threadId,
          date: 1,
          chat: { id: chatId, type: "supergroup" },
          from: { id: TELEGRAM_TEST.botId, is_bot: true, first_name: "Hermes" },
          forum_topic_created: { name: "t", icon_color: 0 },
        },
      },
    };
  },
  command(name: string, args = "", userId = 1001) {
    const text = `/${name}${args ? ` ${args}` : ""}`;
    return tg.dm(text, userId, { entities: [{ type: "bot_command", offset: 0, length: name.length + 1 }] });
  },
};

export const dc = {
  ping: () => ({ id: String(next()), type: 1, application_id: DISCORD_TEST.applicationId, token: "tok", version: 1 }),
  /** An application command; `where` picks a guild channel, a thread or a DM. */
  command(
    name: string,
    options: Record<string, string> = {},
    where: { userId?: string; channelId?: string; thread?: { id: string; parent: string }; dm?: boolean } = {},
  ) {
    const user = { id: where.userId ?? "2001", username: "alice", global_name: "Alice" };
    const channel = where.thread
      ? { id: where.thread.id, type: 11, parent_id: where.thread.parent }
      : { id: where.channelId ?? "3001", type: where.dm ? 1 : 0 };
    return {
      id: String(next()),
      type: 2,
      application_id: DISCORD_TEST.applicationId,
      token: `itok-${next()}`,
      version: 1,
      channel_id: channel.id,
      channel,
      ...(where.dm ? { user } : { guild_id: "9001", member: { user } }),
      data: { id: "cmd", name, type: 1, options: Object.entries(options).map(([n, value]) => ({ name: n, type: 3, value })) },
    };
  },
};

export const sl = {
  challenge: () => ({ type: "url_verification", token: "x", challenge: "the-challenge" }),
  /** An event callback wrapping `event`. */
  envelope(event: Record<string, unknown>) {
    return {
      type: "event_callback",
      team_id: SLACK_TEST.team,
      event_id: `Ev${next()}`,
      event_time: 1700000000,
      authorizations: [{ user_id: SLACK_TEST.botUserId, is_bot: true }],
      event,
    };
  },
  dm: (text: string, user = "U1001", channel = "D1001") =>
    sl.envelope({ type: "message", channel_type: "im", channel, user, text, ts: `1700000000.${next()}` }),
  mention: (text: string, user = "U1001", channel = "C1001", threadTs?: string) =>
    sl.envelope({
      type: "app_mention",
      channel,
      user,
      text: `<@${SLACK_TEST.botUserId}> ${text}`,
      ts: `1700000001.${next()}`,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    }),
  threadReply: (text: string, threadTs: string, user = "U1001", channel = "C1001") =>
    sl.envelope({ type: "message", channel_type: "channel", channel, user, text, ts: `1700000002.${next()}`, thread_ts: threadTs }),
  slash: (text: string, user = "U1001", channel = "C1001") =>
    new URLSearchParams({
      command: "/hermes",
      text,
      user_id: user,
      channel_id: channel,
      team_id: SLACK_TEST.team,
      trigger_id: `trig${next()}`,
      response_url: "https://hooks.slack.test/commands/T0TEAM/1/x",
    }).toString(),
};

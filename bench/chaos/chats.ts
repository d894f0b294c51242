/**
 * One-message conversations on each platform, as the crash scenarios use them: a DM with
 * the bot (Telegram, Slack) or a `/ask` in a DM (Discord, whose reply edits the
 * interaction's @original), each in a chat of its own, with the platform's own shapes of
 * the failures (c) scripts and the edit that completes the reply.
 */
import { dc, sl, tg } from "../../test/support/fixtures.ts";
import { DISCORD_TEST, discordHeaders, slackHeaders, telegramHeaders } from "../../test/support/signing.ts";
import { sessionWhere, type ListedSession } from "./harness.ts";
import type { Stack } from "./stack.ts";
import { freshUser } from "./telegram-dm.ts";
import { plainOf, type PlatformView, type SeenCall } from "./view.ts";

export type PlatformName = "telegram" | "discord" | "slack";
export const PLATFORMS: readonly PlatformName[] = ["telegram", "discord", "slack"];

/** Where a check looks: the chat as the platform view keys it, and its session. */
export interface Conversation {
  platform: PlatformName;
  view: PlatformView;
  chat: string;
  session(): Promise<ListedSession>;
}

/** A failure as the platform sends it: status, body, headers. */
export type Failure = [number, unknown, Record<string, string>?];

export interface OneMessage extends Conversation {
  text: string;
  send(): Promise<void>;
  /** The call that edits this reply to show `text`. */
  editTo(text: string): (c: SeenCall) => boolean;
  unavailable: Failure;
  tooMany(seconds: number): Failure;
}

let seq = 0;

async function post(s: Stack, platform: PlatformName, body: string, headers: Record<string, string>): Promise<void> {
  const status = await s.api.webhook(platform, body, headers);
  if (status !== 200) throw new Error(`${platform} webhook answered ${status}`);
}

/** A fresh chat on `platform` and the one message `text` to be sent in it. */
export function oneMessage(s: Stack, platform: PlatformName, text: string): OneMessage {
  const n = ++seq;
  if (platform === "telegram") {
    const user = freshUser();
    return {
      platform,
      view: s.telegram,
      chat: String(user),
      text,
      send: () => post(s, platform, JSON.stringify(tg.dm(text, user)), telegramHeaders()),
      session: () => sessionWhere(s.api, `the session of Telegram chat ${user}`, (x) => x.session_key === `agent:main:telegram:dm:${user}`),
      editTo: (t) => (c) =>
        c.path.endsWith("/editMessageText") && String(c.body.chat_id) === String(user) && plainOf(platform, String(c.body.text)) === t.trim(),
      unavailable: [500, { ok: false, error_code: 500, description: "Internal Server Error" }],
      tooMany: (sec) => [429, { ok: false, error_code: 429, description: `Too Many Requests: retry after ${sec}`, parameters: { retry_after: sec } }],
    };
  }
  if (platform === "discord") {
    const channel = String(4800000 + n);
    const ask = dc.command("ask", { prompt: text }, { dm: true, channelId: channel, userId: "2001" });
    const body = JSON.stringify(ask);
    const original = `/webhooks/${DISCORD_TEST.applicationId}/${ask.token}/messages/@original`;
    return {
      platform,
      view: s.discord,
      chat: `itok:${ask.token}`,
      text,
      send: async () => post(s, platform, body, await discordHeaders(body)),
      session: () => sessionWhere(s.api, `the session of Discord DM ${channel}`, (x) => x.source === "discord" && x.chat_id === channel),
      editTo: (t) => (c) => c.method === "PATCH" && c.path.includes(original) && plainOf(platform, String(c.body.content)) === t.trim(),
      unavailable: [500, { message: "500: Internal Server Error", code: 0 }],
      tooMany: (sec) => [429, { message: "You are being rate limited.", retry_after: sec, global: false }, { "retry-after": String(sec) }],
    };
  }
  const channel = `D48${n}`;
  const body = JSON.stringify(sl.dm(text, "U1001", channel));
  return {
    platform,
    view: s.slack,
    chat: channel,
    text,
    send: async () => post(s, platform, body, await slackHeaders(body)),
    session: () => sessionWhere(s.api, `the session of Slack DM ${channel}`, (x) => x.source === "slack" && x.chat_id === channel),
    editTo: (t) => (c) => c.path.endsWith("/chat.update") && c.body.channel === channel && plainOf(platform, String(c.body.text)) === t.trim(),
    unavailable: [500, { ok: false, error: "internal_error" }],
    tooMany: (sec) => [429, { ok: false, error: "ratelimited" }, { "retry-after": String(sec) }],
  };
}

/** The Telegram DM of `user`, as a conversation to check (for chats of several messages). */
export function telegramDm(s: Stack, user: number): Conversation {
  return {
    platform: "telegram",
    view: s.telegram,
    chat: String(user),
    session: () => sessionWhere(s.api, `the session of Telegram chat ${user}`, (x) => x.session_key === `agent:main:telegram:dm:${user}`),
  };
}

import { describe, expect, it } from "vitest";
import { DiscordAdapter } from "../../workers/platforms/discord/index.ts";
import { parseGatewayMessage } from "../../workers/platforms/discord/parse-gateway.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import type { PlatformEvent } from "../../workers/platforms/types.ts";
import message from "../corpus/discord/gateway/message.json" with { type: "json" };

const BOT = "990000000000000001";
const GUILD = "880000000000000001";
/** The docs' Example Message (no guild_id: a DM). */
const dm = message.payload.d;
const inGuild = (over: Record<string, unknown> = {}) => ({ ...dm, guild_id: GUILD, ...over });

function event(data: unknown, isThread = false): PlatformEvent {
  const r = parseGatewayMessage(data, { botUserId: BOT, isThread });
  if (r.kind !== "event") throw new Error(`ignored: ${r.reason}`);
  return r.event;
}
const reason = (data: unknown, isThread = false) => {
  const r = parseGatewayMessage(data, { botUserId: BOT, isThread });
  return r.kind === "ignore" ? r.reason : null;
};

describe("Discord Gateway MESSAGE_CREATE → event", () => {
  it("a DM (the docs' example message) is a turn for the bot, keyed on its channel, deduped by the message id, answered as a reply to it", () => {
    const e = event(dm);
    expect(e).toMatchObject({ kind: "message", text: "Supa Hot", addressed: true, deliveryId: dm.id, messageId: dm.id });
    expect(e.source).toMatchObject({ chatType: "dm", chatId: dm.channel_id, userId: dm.author.id, userHandle: "Mason" });
    expect(buildSessionKey(e.source)).toBe(`agent:main:discord:dm:${dm.channel_id}`);
    const adapter = new DiscordAdapter({ applicationId: BOT, publicKey: "", apiBase: "https://discord.test/api/v10" });
    expect(adapter.targets.decode(e.target)).toMatchObject({ channel: dm.channel_id, replyTo: dm.id, interaction: null });
  });

  it("in a server channel only a mention of the bot or a reply to it is a turn (the mention taken out of the text)", () => {
    expect(reason(inGuild())).toBe("not for the bot");
    const mention = event(inGuild({ content: `<@${BOT}> hello there`, mentions: [{ id: BOT, username: "hermes" }] }));
    expect(mention).toMatchObject({ kind: "message", text: "hello there", addressed: true });
    expect(buildSessionKey(mention.source)).toBe(`agent:main:discord:group:${dm.channel_id}:${dm.author.id}`);
    expect(event(inGuild({ content: "<@!990000000000000001> nick form" }))).toMatchObject({ text: "nick form" });
    expect(event(inGuild({ type: 19, referenced_message: { id: "1", author: { id: BOT } } }))).toMatchObject({ addressed: true });
    expect(reason(inGuild({ type: 19, referenced_message: { id: "1", author: { id: "123" } } }))).toBe("not for the bot");
  });

  it("every message in a thread goes on, unaddressed, under the key a handoff thread is bound to (destination())", async () => {
    const thread = "770000000000000042";
    const e = event(inGuild({ channel_id: thread }), true);
    expect(e.addressed).toBe(false);
    const adapter = new DiscordAdapter({ applicationId: BOT, publicKey: "", apiBase: "https://discord.test/api/v10" });
    const dest = await adapter.destination(thread, thread);
    expect(buildSessionKey(e.source)).toBe(buildSessionKey({ ...dest.source, userId: e.source.userId }));
  });

  it("ignores the bot's own messages, other bots', webhooks', and what is not a person's message", () => {
    expect(reason({ ...dm, author: { id: BOT, username: "hermes" } })).toBe("from a bot");
    expect(reason({ ...dm, author: { id: "5", username: "other", bot: true } })).toBe("from a bot");
    expect(reason({ ...dm, webhook_id: "6" })).toBe("from a bot");
    expect(reason({ ...dm, type: 7 })).toBe("message type 7");
    expect(reason({ ...dm, content: "" })).toMatch(/Message Content Intent/);
  });

  it("/stop and !stop typed as messages are the stop command; an unknown one stays a message", () => {
    expect(event({ ...dm, content: "/stop" })).toMatchObject({ kind: "command", name: "stop", args: "" });
    expect(event({ ...dm, content: "!STOP" })).toMatchObject({ kind: "command", name: "stop" });
    expect(event({ ...dm, content: "!resume abc" })).toMatchObject({ kind: "command", name: "resume", args: "abc" });
    expect(event(inGuild({ content: `<@${BOT}> !stop` }))).toMatchObject({ kind: "command", name: "stop", addressed: true });
    expect(event({ ...dm, content: "!shrug" })).toMatchObject({ kind: "message", text: "!shrug" });
  });

  it("keeps attachments (the same mapping as interactions)", () => {
    const file = { id: "1", filename: "a.png", content_type: "image/png", size: 3, url: "https://cdn.discordapp.com/a.png" };
    expect(event({ ...dm, content: "", attachments: [file] })).toMatchObject({ kind: "message", attachments: [{ kind: "image", name: "a.png" }] });
  });
});

import { describe, expect, it } from "vitest";
import { dc, tg } from "../support/fixtures.ts";
import { TELEGRAM_TEST } from "../support/signing.ts";
import { newSession } from "./helpers.ts";
import { inboxIdle, routeOf, settle, tgCommand, toDiscord, toTelegram } from "./platform-helpers.ts";
import { discord, telegram } from "./setup.ts";

/** A group command, as a member types it, answered once its Inbox handed it on. */
async function groupCommand(name: string, args: string, userId: number, chatId: number, thread?: number) {
  const u =
    thread === undefined
      ? tg.group(`/${name}${args ? ` ${args}` : ""}`, { userId, chatId })
      : tg.topic(`/${name}${args ? ` ${args}` : ""}`, thread, { userId, chatId });
  (u.message as Record<string, unknown>).entities = [{ type: "bot_command", offset: 0, length: name.length + 1 }];
  await toTelegram(u);
  await inboxIdle(thread === undefined ? `agent:main:telegram:group:${chatId}:${userId}` : `agent:main:telegram:group:${chatId}:${thread}`);
}

const lastReply = (chatId: number) => telegram.texts(chatId).at(-1) ?? "";

describe("regression: /resume crossed users in shared chats", () => {
  it("a member of a group can neither list nor resume another member's per-user session", async () => {
    const chatId = -100710;
    await toTelegram(tg.group("my private plans", { userId: 1001, chatId, mention: true }));
    await settle();
    const victim = await routeOf(`agent:main:telegram:group:${chatId}:1001`);
    expect(victim).not.toBeNull();

    await groupCommand("resume", "", 1002, chatId);
    expect(lastReply(chatId)).not.toContain(victim!);
    expect(lastReply(chatId)).not.toContain("my private plans");
    await groupCommand("resume", victim!, 1002, chatId);
    expect(lastReply(chatId)).toContain("No session matches");
    await groupCommand("resume", "my private", 1002, chatId);
    expect(lastReply(chatId)).toContain("No session matches");
    expect(await routeOf(`agent:main:telegram:group:${chatId}:1002`)).not.toBe(victim);

    // The owner may take their own session along, even into a DM.
    await tgCommand("resume", victim!, 1001);
    expect(lastReply(1001)).toContain(`Resumed ${victim}`);
  });

  it("a shared topic session is resumable from its own chat only", async () => {
    const chatId = -100711;
    const topicMsg = tg.topic(`@${TELEGRAM_TEST.username} topic talk`, 41, { userId: 1001, chatId });
    (topicMsg.message as Record<string, unknown>).entities = [{ type: "mention", offset: 0, length: TELEGRAM_TEST.username.length + 1 }];
    await toTelegram(topicMsg);
    await settle();
    const shared = await routeOf(`agent:main:telegram:group:${chatId}:41`);
    expect(shared).not.toBeNull();
    await groupCommand("resume", shared!, 1002, chatId);
    expect(lastReply(chatId)).toContain(`Resumed ${shared}`);
    await tgCommand("resume", shared!, 1002);
    expect(lastReply(1002)).toContain("No session matches");
    await groupCommand("resume", shared!, 1002, -100712);
    expect(lastReply(-100712)).toContain("No session matches");
  });

  it("CLI sessions are resumable only by *_ADMIN_USERS, and not listed to anyone else", async () => {
    const cli = await newSession("operator notes");
    await tgCommand("resume", "", 1002);
    expect(lastReply(1002)).not.toContain(cli);
    await tgCommand("resume", cli, 1002);
    expect(lastReply(1002)).toContain("No session matches");
    await tgCommand("resume", "", 1007);
    expect(lastReply(1007)).toContain(cli);
  });

  it("in a Discord guild channel, another member cannot resume a member's session", async () => {
    await toDiscord(dc.command("ask", { prompt: "guild secret" }, { userId: "2001", channelId: "3710" }));
    await settle();
    const victim = await routeOf("agent:main:discord:group:3710:2001");
    expect(victim).not.toBeNull();
    const resume = dc.command("resume", { session: victim! }, { userId: "2002", channelId: "3710" });
    await toDiscord(resume);
    await settle();
    const shown = discord.calls.find((c) => c.path.includes(resume.token))!;
    expect(String(shown.body.content)).toContain("No session matches");
    expect(await routeOf("agent:main:discord:group:3710:2002")).not.toBe(victim);
  });
});

describe("regression: a long /resume reference answered 500 (D1 refuses LIKE patterns over 50 bytes)", () => {
  it("answers that nothing matches", async () => {
    for (const ref of ["x".repeat(50), "ü".repeat(30), "y".repeat(5000)]) {
      const res = await tgCommand("resume", ref, 1001);
      expect(res.status).toBe(200);
      expect(lastReply(1001)).toContain("No session matches");
    }
  });
});

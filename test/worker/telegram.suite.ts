import { describe, expect, it } from "vitest";
import { refusalText } from "../../workers/conversations/texts.ts";
import { tg } from "../support/fixtures.ts";
import { telegramHeaders } from "../support/signing.ts";
import { call, newSession } from "./helpers.ts";
import { bind, deliver, inboxCount, routeOf, sessionFor, settle, tgCommand, toTelegram, untilRunning } from "./platform-helpers.ts";
import { llm, telegram } from "./setup.ts";

describe("Telegram webhook", () => {
  it("refuses a missing or wrong secret with 401 before anything else happens", async () => {
    const before = await inboxCount();
    for (const headers of [{ "content-type": "application/json" }, telegramHeaders("wrong-secret"), telegramHeaders(`${"tg-webhook-secret"}x`)]) {
      const res = await toTelegram(tg.dm("hi"), headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: "unauthorized" } });
    }
    expect(telegram.calls).toEqual([]);
    expect(await inboxCount()).toBe(before);
    expect(llm.calls).toHaveLength(0);
  });

  it("answers a DM from an allowed user in that chat, with typing first, keyed on the chat", async () => {
    const res = await toTelegram(tg.dm("hello bot", 1001));
    expect(res.status).toBe(200);
    await settle();
    expect(telegram.called("/sendChatAction")[0]!.body).toMatchObject({ chat_id: 1001, action: "typing" });
    expect(telegram.texts(1001).at(-1)).toBe("echo: hello bot");
    const sessionId = await routeOf("agent:main:telegram:dm:1001");
    expect(sessionId).not.toBeNull();
    const { messages } = (await (await call(`/v1/sessions/${sessionId}/messages`)).json()) as { messages: Array<{ role: string; content: string }> };
    // The chat's session may hold earlier turns of other files in this runtime (chat 1001 is shared).
    expect(messages.slice(-2).map((m) => [m.role, m.content])).toEqual([
      ["user", "hello bot"],
      ["assistant", "echo: hello bot"],
    ]);
  });

  it("takes a redelivered update in once: 200 again, no second turn", async () => {
    const update = tg.dm("only once", 1001);
    expect((await toTelegram(update)).status).toBe(200);
    expect((await toTelegram(update)).status).toBe(200);
    await settle();
    expect(llm.calls).toHaveLength(1);
    expect(telegram.texts(1001).filter((t) => t === "echo: only once")).toHaveLength(1);
  });

  it("in groups, answers only mentions and replies to the bot, one session per user", async () => {
    await toTelegram(tg.group("just chatting"));
    await settle();
    expect(llm.calls).toHaveLength(0);
    await toTelegram(tg.group("what time is it", { mention: true, userId: 1001 }));
    await toTelegram(tg.group("and me?", { replyToBot: true, userId: 1002 }));
    await settle();
    expect(llm.calls.map((c) => c.body.messages.at(-1)!.content).sort()).toEqual(["and me?", "what time is it"]);
    expect(await routeOf("agent:main:telegram:group:-100200:1001")).not.toBeNull();
    expect(await routeOf("agent:main:telegram:group:-100200:1002")).not.toBeNull();
    const reply = telegram.called("/sendMessage").find((c) => c.body.text === "echo: what time is it")!;
    expect(reply.body).toMatchObject({ chat_id: -100200, reply_parameters: { message_id: expect.any(Number) } });
  });

  it("hears every message in a topic bound to a session, and nothing in an unbound one", async () => {
    await toTelegram(tg.topic("nobody asked me", 77));
    await settle();
    expect(llm.calls).toHaveLength(0);
    const sessionId = await newSession("handed off");
    await bind("agent:main:telegram:group:-100300:88", sessionId);
    await toTelegram(tg.topic("continue please", 88, { userId: 1002 }));
    await settle();
    expect(llm.calls).toHaveLength(1);
    expect(telegram.called("/sendMessage").at(-1)!.body).toMatchObject({ chat_id: -100300, message_thread_id: 88, text: "echo: continue please" });
  });

  it("refuses an unauthorised user once per chat per 10 minutes, with no model call", async () => {
    await toTelegram(tg.dm("let me in", 1003));
    await toTelegram(tg.dm("please", 1003));
    await settle();
    expect(telegram.texts(1003)).toEqual([refusalText("telegram", "1003")]);
    expect(llm.calls).toHaveLength(0);
    expect(await routeOf("agent:main:telegram:dm:1003")).toBeNull();
  });

  it("ignores malformed JSON, unknown update types and messages with no text, with a 2xx", async () => {
    const before = await inboxCount();
    const bodies = [
      "{not json",
      JSON.stringify({ update_id: 1, edited_message: tg.dm("x").message }),
      JSON.stringify({ update_id: 2, message: { ...tg.dm("").message, text: undefined, sticker: {} } }),
    ];
    for (const body of bodies) expect((await deliver("telegram", body, telegramHeaders())).status).toBe(200);
    await settle();
    expect(llm.calls).toHaveLength(0);
    expect(telegram.calls.filter((c) => !c.path.endsWith("/getMe"))).toEqual([]);
    expect(await inboxCount()).toBe(before);
  });

  it("answers 413 to a body over 1 MiB, and 404 when the platform is not enabled", async () => {
    const big = JSON.stringify({ update_id: 1, pad: "x".repeat(1024 * 1024) });
    expect((await deliver("telegram", big, telegramHeaders())).status).toBe(413);
    expect((await deliver("icq", "{}", telegramHeaders())).status).toBe(404);
  });

  it("splits a reply longer than 4096 UTF-16 units", async () => {
    llm.text("🙂".repeat(2100), " and ", "a".repeat(100));
    await toTelegram(tg.dm("long please", 1001));
    await settle();
    const texts = telegram.called("/sendMessage").map((c) => String(c.body.text));
    expect(texts.length).toBeGreaterThanOrEqual(2);
    for (const t of texts) expect(t.length).toBeLessThanOrEqual(4096);
    expect(texts.join("").replace(/\s/g, "")).toBe(`${"🙂".repeat(2100)}and${"a".repeat(100)}`);
  });
});

describe("Telegram chat commands", () => {
  it("/help, /new, /resume and /sethome answer in the chat", async () => {
    await tgCommand("help");
    expect(telegram.texts(1001).at(-1)).toContain("/stop");
    await toTelegram(tg.dm("first session message"));
    await settle();
    const first = await routeOf("agent:main:telegram:dm:1001");
    await tgCommand("new");
    const second = await routeOf("agent:main:telegram:dm:1001");
    expect(second).not.toBe(first);
    expect(telegram.texts(1001).at(-1)).toContain(`/resume ${first}`);
    await tgCommand("resume");
    expect(telegram.texts(1001).at(-1)).toContain(first);
    await tgCommand("resume", first!);
    expect(await routeOf("agent:main:telegram:dm:1001")).toBe(first);
    // Only an admin (TELEGRAM_ADMIN_USERS=1007 in the tests) may set the home channel.
    await tgCommand("sethome", "", 1007);
    const { platforms } = (await (await call("/v1/platforms")).json()) as { platforms: Array<{ name: string; home_channel: unknown }> };
    expect(platforms.find((p) => p.name === "telegram")!.home_channel).toMatchObject({ chat_id: "1007", thread_id: null, source: "sethome", set_by: "1007" });
  });

  it("/sethome from an allowed user who is no admin is refused, naming TELEGRAM_ADMIN_USERS, and changes nothing", async () => {
    const before = ((await (await call("/v1/platforms")).json()) as { platforms: Array<{ name: string; home_channel: unknown }> }).platforms.find(
      (p) => p.name === "telegram",
    )!.home_channel;
    await tgCommand("sethome", "", 1002);
    expect(telegram.texts(1002).at(-1)).toBe("Sorry, only TELEGRAM_ADMIN_USERS may set the home channel: ask the bot's owner to add your user id 1002 to it.");
    const after = ((await (await call("/v1/platforms")).json()) as { platforms: Array<{ name: string; home_channel: unknown }> }).platforms.find(
      (p) => p.name === "telegram",
    )!.home_channel;
    expect(after).toEqual(before);
  });

  it("/stop cancels this chat's running turn only, and says so", async () => {
    const gate = llm.hold(["thinking hard "], ["never sent"]);
    await toTelegram(tg.dm("a long task", 1001));
    await untilRunning((await sessionFor("agent:main:telegram:dm:1001"))!);
    await toTelegram(tg.dm("meanwhile in another chat", 1002));
    await tgCommand("stop", "", 1001);
    expect(telegram.texts(1001)).toContain("Stopped.");
    await settle();
    expect(gate.cancelled).toBe(true);
    expect(telegram.texts(1002).at(-1)).toBe("echo: meanwhile in another chat");
    await tgCommand("stop", "", 1001);
    expect(telegram.texts(1001).at(-1)).toBe("Nothing is running here.");
  });
});

describe("regression: /resume by an id prefix found nothing (LIKE without ESCAPE)", () => {
  it("resumes a session named by a unique prefix of its id, which contains underscores", async () => {
    const id = await newSession("prefix target");
    // A CLI session: only an admin (TELEGRAM_ADMIN_USERS) may resume it.
    await tgCommand("resume", id.slice(0, -1), 1007);
    expect(telegram.texts(1007).at(-1)).toContain(`Resumed ${id}`);
    expect(await routeOf("agent:main:telegram:dm:1007")).toBe(id);
  });
});

describe("regression: one mention made a forum topic answer everything", () => {
  it("a topic where the bot was mentioned once still needs a mention; a bound one does not", async () => {
    const chatId = -100404;
    const mention = tg.topic("@hermes_test_bot hello", 9, { userId: 1001, chatId });
    (mention.message as Record<string, unknown>).entities = [{ type: "mention", offset: 0, length: 16 }];
    await toTelegram(mention);
    await settle();
    expect(llm.calls).toHaveLength(1);
    await toTelegram(tg.topic("just chatting among ourselves", 9, { userId: 1002, chatId }));
    await settle();
    expect(llm.calls).toHaveLength(1);
  });
});

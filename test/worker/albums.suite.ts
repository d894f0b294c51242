import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { imagesOf, lastUserText } from "../support/fake-llm.ts";
import { dataUrl, PNG } from "../support/files.ts";
import { tg } from "../support/fixtures.ts";
import { settle, toTelegram } from "./platform-helpers.ts";
import { llm, telegram } from "./setup.ts";

/**
 * A Telegram album (several photos sent at once) arrives as one message per photo, the
 * caption on one of them, all with the same media_group_id (Bot API: Message.media_group_id).
 * It is one thing a person said: one turn with every photo, answered once.
 */
const photo = (fileId: string) => [
  { file_id: `${fileId}-thumb`, file_unique_id: `${fileId}-t`, width: 90, height: 90, file_size: 100 },
  { file_id: fileId, file_unique_id: fileId, width: 800, height: 600, file_size: PNG.byteLength },
];

let chats = 7_300;

/** The Inbox of a Telegram chat, where the album waits for its parts. */
const inboxOf = (key: string) => env.INBOX.getByName(key);

describe("albums", () => {
  it("a DM album of three photos, captioned on the first, is one turn with three images and one reply", async () => {
    const chatId = ++chats;
    const key = `agent:main:telegram:dm:${chatId}`;
    const chat = { chat: { id: chatId, type: "private", first_name: "u" } };
    for (const id of ["al-1", "al-2", "al-3"]) telegram.serveFile(id, PNG, "image/png", `photos/${id}.png`);
    const calls = llm.calls.length;
    await toTelegram(tg.dm("", 1001, { ...chat, photo: photo("al-1"), caption: "which of these is sharpest?", media_group_id: "13579" }));
    await toTelegram(tg.dm("", 1001, { ...chat, photo: photo("al-2"), media_group_id: "13579" }));
    await toTelegram(tg.dm("", 1001, { ...chat, photo: photo("al-3"), media_group_id: "13579" }));
    // The wait for more parts ends with the Inbox's alarm (run now: no real sleep).
    expect(await runDurableObjectAlarm(inboxOf(key))).toBe(true);
    await settle();
    expect(llm.calls.length - calls).toBe(1);
    const sent = llm.calls.at(-1)!.body;
    expect(imagesOf(sent.messages.at(-1)!.content)).toEqual([dataUrl("image/png", PNG), dataUrl("image/png", PNG), dataUrl("image/png", PNG)]);
    expect(lastUserText(sent)).toMatch(/^which of these is sharpest\?\n\n/);
    // One reply: one message sent to the chat (later edits only complete it).
    expect(telegram.called("/sendMessage").filter((c) => String(c.body.chat_id) === String(chatId))).toHaveLength(1);
  });

  it("in a group, the album's other photos join the part whose caption mentions the bot, whichever came first; an album nobody addressed stays silent", async () => {
    const group = -100_7300 - ++chats;
    const chat = { chat: { id: group, type: "supergroup", title: "team" } };
    for (const id of ["ga-1", "ga-2", "gb-1", "gb-2"]) telegram.serveFile(id, PNG, "image/png", `photos/${id}.png`);
    const calls = llm.calls.length;
    const mention = "@hermes_test_bot";
    // The caption that addresses the bot may come on any part, here the last one.
    await toTelegram(tg.dm("", 1001, { ...chat, photo: photo("ga-2"), media_group_id: "g-1" }));
    await toTelegram(
      tg.dm("", 1001, {
        ...chat,
        photo: photo("ga-1"),
        caption: `${mention} compare these`,
        caption_entities: [{ type: "mention", offset: 0, length: mention.length }],
        media_group_id: "g-1",
      }),
    );
    // Another album in the same chat, for nobody.
    await toTelegram(tg.dm("", 1001, { ...chat, photo: photo("gb-1"), caption: "holiday", media_group_id: "g-2" }));
    await toTelegram(tg.dm("", 1001, { ...chat, photo: photo("gb-2"), media_group_id: "g-2" }));
    const key = `agent:main:telegram:group:${group}:1001`;
    // Each album waits its own time: one alarm for each.
    expect(await runDurableObjectAlarm(inboxOf(key))).toBe(true);
    expect(await runDurableObjectAlarm(inboxOf(key))).toBe(true);
    await settle();
    expect(llm.calls.length - calls).toBe(1);
    const sent = llm.calls.at(-1)!.body;
    expect(imagesOf(sent.messages.at(-1)!.content)).toHaveLength(2);
    expect(lastUserText(sent)).toMatch(/^compare these\n\n/);
    expect(telegram.called("/getFile").map((c) => c.body.file_id)).not.toContain("gb-1");
    expect(telegram.called("/sendMessage").filter((c) => String(c.body.chat_id) === String(group))).toHaveLength(1);
  });

  it("an album whose Inbox restarts during the wait is still one turn (its parts and alarm are stored)", async () => {
    const chatId = ++chats;
    const key = `agent:main:telegram:dm:${chatId}`;
    const chat = { chat: { id: chatId, type: "private", first_name: "u" } };
    for (const id of ["cr-1", "cr-2"]) telegram.serveFile(id, PNG, "image/png", `photos/${id}.png`);
    const calls = llm.calls.length;
    await toTelegram(tg.dm("", 1001, { ...chat, photo: photo("cr-1"), caption: "before the crash", media_group_id: "24680" }));
    await toTelegram(tg.dm("", 1001, { ...chat, photo: photo("cr-2"), media_group_id: "24680" }));
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(inboxOf(key))).toBe(true);
    await settle();
    expect(llm.calls.length - calls).toBe(1);
    expect(imagesOf(llm.calls.at(-1)!.body.messages.at(-1)!.content)).toHaveLength(2);
    expect(telegram.called("/sendMessage").filter((c) => String(c.body.chat_id) === String(chatId))).toHaveLength(1);
  });
});

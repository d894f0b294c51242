import { describe, expect, it } from "vitest";
import { refusalText, whoamiText } from "../../workers/conversations/texts.ts";
import { PNG } from "../support/files.ts";
import { dc, tg } from "../support/fixtures.ts";
import { imagesOf, lastUserText } from "../support/fake-llm.ts";
import { TELEGRAM_TEST } from "../support/signing.ts";
import { inboxIdle, routeOf, settle, tgCommand, toDiscord, toTelegram } from "./platform-helpers.ts";
import { discord, discordCdn, llm, telegram } from "./setup.ts";

/** A Discord autocomplete interaction for `/<command> <option>:<typed…>`. */
function autocomplete(command: string, option: string, typed: string, userId = "2001") {
  const base = dc.command(command, {}, { userId });
  return { ...base, type: 4, data: { ...base.data, options: [{ name: option, type: 3, value: typed, focused: true }] } };
}

describe("Discord autocomplete", () => {
  it("/resume offers the sessions the user may resume, narrowed to what is typed (type 8 choices)", async () => {
    await toDiscord(dc.command("ask", { prompt: "plan the garden" }, { userId: "2002", channelId: "3100" }));
    await toDiscord(dc.command("ask", { prompt: "other channel" }, { userId: "2002", channelId: "3101" }));
    await settle();
    const garden = (await routeOf("agent:main:discord:group:3100:2002"))!;
    const all = (await (await toDiscord(autocomplete("resume", "session", "", "2002"))).json()) as {
      type: number;
      data: { choices: Array<{ name: string; value: string }> };
    };
    expect(all.type).toBe(8);
    expect(all.data.choices.map((c) => c.value)).toEqual(expect.arrayContaining([garden, (await routeOf("agent:main:discord:group:3101:2002"))!]));
    const narrowed = (await (await toDiscord(autocomplete("resume", "session", garden.slice(-6), "2002"))).json()) as typeof all;
    expect(narrowed.data.choices).toEqual([{ name: expect.stringContaining(garden), value: garden }]);
  });

  it("offers nothing to someone not allowed, nor for an argument that has no choices", async () => {
    for (const body of [autocomplete("resume", "session", "", "6666"), autocomplete("ask", "prompt", "hel")]) {
      expect(await (await toDiscord(body)).json()).toEqual({ type: 8, data: { choices: [] } });
    }
  });
});

describe('Discord "Ask hermes" on a message', () => {
  it("runs a turn on the target message, its text and its attachments, in a thread", async () => {
    discordCdn.serve("/attachments/9/9/chart.png", PNG, "image/png");
    const base = dc.command("Ask hermes", {}, { thread: { id: "4555", parent: "3001" } });
    const menu = {
      ...base,
      data: {
        name: "Ask hermes",
        type: 3,
        target_id: "8001",
        resolved: {
          messages: {
            "8001": {
              id: "8001",
              content: "why did the numbers drop?",
              attachments: [
                { id: "a1", filename: "chart.png", content_type: "image/png", size: PNG.byteLength, url: "https://cdn.discord.test/attachments/9/9/chart.png" },
              ],
            },
          },
        },
      },
    };
    expect(await (await toDiscord(menu)).json()).toEqual({ type: 5 });
    await settle();
    const body = llm.calls.at(-1)!.body;
    expect(lastUserText(body)).toBe("why did the numbers drop?\n\n[image chart.png (image/png, 70 B): the image is attached]");
    expect(imagesOf(body.messages.at(-1)!.content)).toHaveLength(1);
    expect(await routeOf("agent:main:discord:thread:4555:4555")).not.toBeNull();
    expect(discord.calls.find((c) => c.method === "PATCH" && c.path.includes(base.token))!.body.content).toMatch(/^echo: why did the numbers drop\?/);
  });
});

describe("Telegram commands and mentions", () => {
  const group = (text: string, entities: unknown[], chatId: number, userId = 1001) => {
    const u = tg.group(text, { chatId, userId });
    (u.message as Record<string, unknown>).entities = entities;
    return u;
  };

  it("an unknown command: in a DM it is told so; /x@thisbot in a group too; a bare /x in a group is another bot's", async () => {
    await tgCommand("frobnicate");
    expect(telegram.texts(1001).at(-1)).toBe("Unknown command /frobnicate. /help lists the commands.");
    const chatId = -100820;
    const addressed = `/frobnicate@${TELEGRAM_TEST.username}`;
    await toTelegram(group(addressed, [{ type: "bot_command", offset: 0, length: addressed.length }], chatId));
    await toTelegram(group("/ban someone", [{ type: "bot_command", offset: 0, length: 4 }], chatId, 1002));
    await settle();
    expect(telegram.texts(chatId)).toEqual(["Unknown command /frobnicate. /help lists the commands."]);
    expect(llm.calls).toHaveLength(0);
  });

  it("@thisbot typed as plain text, in any case, with no mention entity, addresses it and is taken out of the words", async () => {
    const chatId = -100821;
    await toTelegram(group(`hey @${TELEGRAM_TEST.username.toUpperCase()} what's new?`, [], chatId));
    await toTelegram(
      group(`\`@${TELEGRAM_TEST.username}\` is its name`, [{ type: "code", offset: 0, length: TELEGRAM_TEST.username.length + 3 }], chatId, 1002),
    );
    await settle();
    expect(llm.calls.map((c) => lastUserText(c.body))).toEqual(["hey what's new?"]);
  });

  it("a group message that starts with a slash but has no command entity is words, not another bot's command", async () => {
    await toTelegram(group(`/tmp is full, @${TELEGRAM_TEST.username} can you help?`, [], -100822));
    await settle();
    expect(llm.calls.map((c) => lastUserText(c.body))).toEqual(["/tmp is full, can you help?"]);
  });

  it("/whoami tells anyone their platform, id and whether they may use the bot; the refusal names the id and the setting", async () => {
    await tgCommand("whoami", "", 1077);
    await inboxIdle("agent:main:telegram:dm:1077");
    await toTelegram(tg.dm("let me in", 1077));
    await tgCommand("whoami", "", 1002);
    await settle();
    expect(telegram.texts(1077)).toEqual([whoamiText("telegram", "1077", false), refusalText("telegram", "1077")]);
    expect(telegram.texts(1077)[0]).toBe("You are Telegram user 1077. You may not use this bot yet: its owner can add 1077 to TELEGRAM_ALLOWED_USERS.");
    expect(telegram.texts(1077)[1]).toContain("user id 1077 to TELEGRAM_ALLOWED_USERS");
    expect(telegram.texts(1002).at(-1)).toBe("You are Telegram user 1002. You may use this bot.");
  });
});

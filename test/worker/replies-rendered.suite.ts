import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { discordTarget } from "../../workers/platforms/discord/index.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { telegramTarget } from "../../workers/platforms/telegram/index.ts";
import type { ApiCall } from "../support/fake-platforms.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { sessionFor, settle, toDiscord, toSlack, toTelegram } from "./platform-helpers.ts";
import { discord, llm, slack, telegram } from "./setup.ts";

/** Adapters render the model's Markdown natively: what each platform API receives. */
const REPLY = "## Plan\n\nRun **npm ci**, then `wrangler deploy`. See [the docs](https://developers.cloudflare.com/workers/).";

const shows = (c: ApiCall) => c.path.endsWith("/sendMessage") || c.path.endsWith("/editMessageText");
const tgShows = (chatId: number) => telegram.calls.filter((c) => shows(c) && c.body.chat_id === chatId);
const entityError = { ok: false, error_code: 400, description: "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 4" };
/** Fence lines of a Discord message: an even number, so every code block is closed. */
const fenceLines = (content: string) => content.split("\n").filter((l) => l.startsWith("```"));

describe("replies reach each platform rendered", () => {
  it("Telegram: text plus entities, never parse_mode", async () => {
    llm.text(REPLY);
    await toTelegram(tg.dm("plan?", 1002));
    await settle();
    const calls = tgShows(1002);
    expect(calls.every((c) => c.body.parse_mode === undefined)).toBe(true);
    expect(calls.at(-1)!.body).toMatchObject({
      text: "Plan\n\nRun npm ci, then wrangler deploy. See the docs.",
      entities: [
        { type: "bold", offset: 0, length: 4 },
        { type: "bold", offset: 10, length: 6 },
        { type: "code", offset: 23, length: 15 },
        { type: "text_link", offset: 44, length: 8, url: "https://developers.cloudflare.com/workers/" },
      ],
    });
  });

  it("Telegram: when the Bot API refuses the entities (400 can't parse entities), the words still arrive, as plain text", async () => {
    telegram.failNext("/sendMessage", 400, entityError);
    llm.text("**Careful**: read it all.");
    await toTelegram(tg.dm("careful?", 1002));
    await settle();
    const sends = telegram.called("/sendMessage").map((c) => [c.body.text, c.body.entities]);
    expect(sends).toEqual([
      ["Careful: read it all.", [{ type: "bold", offset: 0, length: 7 }]],
      ["Careful: read it all.", undefined],
    ]);

    // An edit refused the same way is made again without entities.
    telegram.failNext("/editMessageText", 400, entityError);
    const adapter = adapterFor(env, "telegram")!;
    await adapter.show(telegramTarget("1002", null, null), "now *this*", ["901"], "final");
    expect(telegram.called("/editMessageText").map((c) => [c.body.message_id, c.body.text, c.body.entities])).toEqual([
      [901, "now this", [{ type: "italic", offset: 4, length: 4 }]],
      [901, "now this", undefined],
    ]);
  });

  it("Slack: mrkdwn in text", async () => {
    llm.text(REPLY);
    await toSlack(sl.dm("plan?", "U1002", "D1002"));
    await settle();
    expect(slack.texts("D1002").at(-1)).toBe("*Plan*\n\nRun *npm ci*, then `wrangler deploy`. See <https://developers.cloudflare.com/workers/|the docs>.");
  });

  it("Discord: its Markdown in content, with no mention parsed", async () => {
    llm.text(`${REPLY} @everyone`);
    const ask = dc.command("ask", { prompt: "plan?" });
    await toDiscord(ask);
    await settle();
    const edit = discord.calls.filter((c) => c.method === "PATCH" && c.path.includes(ask.token)).at(-1)!;
    expect(edit.body).toEqual({
      content: "## Plan\n\nRun **npm ci**, then `wrangler deploy`. See [the docs](https://developers.cloudflare.com/workers/). @\u200beveryone",
      allowed_mentions: { parse: [] },
    });
  });

  it("a long code reply is split within each limit, every part a closed code block in the same language", async () => {
    const code = "const answer = compute(42); // and a comment\n".repeat(120);
    const md = `Here is the file:\n\n\`\`\`ts\n${code}\`\`\`\n\nDone.`;
    llm.text(md);
    const ask = dc.command("ask", { prompt: "the file" });
    await toDiscord(ask);
    llm.text(md);
    await toTelegram(tg.dm("the file", 1002));
    await settle();

    const contents = discord.calls.filter((c) => c.path.includes(ask.token) && typeof c.body.content === "string").map((c) => String(c.body.content));
    const parts = [...new Set(contents)];
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(2000);
      const fences = fenceLines(p);
      expect(fences.length % 2, p.slice(0, 80)).toBe(0);
      if (fences.length > 0) expect(fences[0]).toBe("```ts");
    }

    const tgParts = telegram.called("/sendMessage").map((c) => c.body as { text: string; entities: Array<{ type: string; language?: string }> });
    expect(tgParts.length).toBeGreaterThanOrEqual(2);
    for (const p of tgParts) {
      expect(p.text.length).toBeLessThanOrEqual(4096);
      expect(p.text).not.toContain("```");
      expect(p.entities.filter((e) => e.type === "pre").map((e) => e.language)).toEqual(["ts"]);
    }
  });
});

describe("user text in messages the adapters write themselves", () => {
  it("a session title in a Slack handoff seed cannot mention the channel", async () => {
    await adapterFor(env, "slack")!.createHandoffThread("C4010", "<!channel> trip & <https://x.io|co>");
    expect(slack.texts("C4010").at(-1)).toContain("*&lt;!channel&gt; trip &amp; &lt;https://x.io|co&gt;*");
  });
});

describe("streamed previews of unfinished Markdown", () => {
  const REPLY_WITH_CODE = "Try this:\n\n```py\nfor i in range(3):\n    print(i)\n```\n\nThat **prints** 0 to 2.";

  it("every live edit of a reply with an unclosed code fence shows no raw ``` (Telegram) and only closed fences (Discord)", async () => {
    const tgAdapter = adapterFor(env, "telegram")!;
    const dcAdapter = adapterFor(env, "discord")!;
    const tgAt = telegramTarget("1002", null, null);
    const dcAt = discordTarget("3001", null, false);
    let tgIds: string[] = [];
    let dcIds: string[] = [];
    for (let n = 1; n <= REPLY_WITH_CODE.length; n++) {
      const prefix = REPLY_WITH_CODE.slice(0, n);
      tgIds = (await tgAdapter.show(tgAt, prefix, tgIds, "live")).ids;
      dcIds = (await dcAdapter.show(dcAt, prefix, dcIds, "live")).ids;
    }
    const tgCalls = tgShows(1002);
    const tgTexts = tgCalls.map((c) => String(c.body.text));
    const dcTexts = discord.contents();
    // A preview that renders as the last one did (a marker typed) is not sent again.
    const looks = tgCalls.map((c) => JSON.stringify([c.body.text, c.body.entities]));
    expect(looks.filter((l, i) => l === looks[i - 1])).toEqual([]);
    expect(tgTexts.length).toBeLessThan(REPLY_WITH_CODE.length);
    for (const t of tgTexts) expect(t).not.toMatch(/`|\*\*/);
    for (const t of dcTexts) expect(fenceLines(t).length % 2, t).toBe(0);
    expect(tgTexts).toContain("Try this:\n\nfor i in range(3):");
    expect(dcTexts).toContain("Try this:\n\n```py\nfor i in range(3):\n```");
  });

  it("a turn held inside a code block previews it as code, then ends with the full rendering", async () => {
    const gate = llm.hold(["Try this:\n\n```py\nfor i in ", "range(3):\n    pri"], ["nt(i)\n```\n\nThat **prints** 0 to 2."]);
    await toTelegram(tg.dm("loop?", 1002));
    const agent = env.SESSION_AGENT.getByName((await sessionFor("agent:main:telegram:dm:1002"))!);
    // Waits through the object's own I/O until the live update went out.
    for (let i = 0; i < 1000 && tgShows(1002).length === 0; i++) await agent.status();
    const preview = tgShows(1002)[0]!.body;
    expect(preview.text).not.toContain("`");
    expect(preview.entities).toContainEqual(expect.objectContaining({ type: "pre", language: "py" }));
    gate.release();
    await settle();
    expect(tgShows(1002).at(-1)!.body).toMatchObject({ text: "Try this:\n\nfor i in range(3):\n    print(i)\n\nThat prints 0 to 2." });
  });
});

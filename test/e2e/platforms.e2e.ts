import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { harness, type Harness } from "../support/e2e.ts";
import type { FakeLlm } from "../support/fake-llm.ts";
import type { ApiCall, FakeDiscord, FakeSlack, FakeTelegram } from "../support/fake-platforms.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { DISCORD_TEST, discordHeaders, slackHeaders, telegramHeaders } from "../support/signing.ts";
import type { E2eWorker } from "../support/bundled-worker.ts";

/** Each platform end to end: signed webhooks into the e2e Worker (the deploy bundle in miniflare), replies out to loopback fakes. */
let h: Harness;
let worker: E2eWorker;
let llm: FakeLlm;
let telegram: FakeTelegram;
let discord: FakeDiscord;
let slack: FakeSlack;

beforeAll(async () => {
  h = await harness();
  ({ worker, llm, telegram, discord, slack } = h);
});

beforeEach(() => h.reset());

const post = (platform: string, body: string, headers: Record<string, string>) =>
  fetch(`${worker.url}/webhooks/${platform}`, { method: "POST", headers, body });
const text = (c: ApiCall) => String(c.body.text ?? c.body.content ?? "");

describe("platforms end to end", () => {
  it("Telegram: a DM gets the streamed reply in its chat; a redelivery changes nothing; /stop stops a running turn", async () => {
    const update = tg.dm("hello from telegram", 1001);
    expect((await post("telegram", JSON.stringify(update), telegramHeaders())).status).toBe(200);
    await telegram.waitFor((c) => c.path.endsWith("/sendMessage") && text(c) === "echo: hello from telegram");
    expect((await post("telegram", JSON.stringify(update), telegramHeaders())).status).toBe(200);

    llm.hold(["working on it "], ["never"]);
    await post("telegram", JSON.stringify(tg.dm("a long job", 1002)), telegramHeaders());
    await telegram.waitFor((c) => c.path.endsWith("/sendMessage") && text(c).startsWith("working on it"));
    await post("telegram", JSON.stringify(tg.command("stop", "", 1002)), telegramHeaders());
    await telegram.waitFor((c) => c.path.endsWith("/sendMessage") && text(c) === "Stopped.");
    expect(telegram.calls.filter((c) => text(c) === "echo: hello from telegram")).toHaveLength(1);
    expect((await post("telegram", JSON.stringify(tg.dm("x")), telegramHeaders("forged"))).status).toBe(401);
  });

  it("Discord: PING → PONG; /ask is deferred and its reply edits @original", async () => {
    const ping = JSON.stringify(dc.ping());
    expect(await (await post("discord", ping, await discordHeaders(ping))).json()).toEqual({ type: 1 });
    const ask = dc.command("ask", { prompt: "hello from discord" });
    const body = JSON.stringify(ask);
    expect(await (await post("discord", body, await discordHeaders(body))).json()).toEqual({ type: 5 });
    const edit = await discord.waitFor(
      (c) => c.method === "PATCH" && c.path.includes(`/webhooks/${DISCORD_TEST.applicationId}/${ask.token}/messages/@original`),
    );
    expect(edit.body.content).toBe("echo: hello from discord");
  });

  it("Slack: url_verification, then a DM answered in the DM", async () => {
    const challenge = JSON.stringify(sl.challenge());
    expect(await (await post("slack", challenge, await slackHeaders(challenge))).json()).toEqual({ challenge: "the-challenge" });
    const dm = JSON.stringify(sl.dm("hello from slack"));
    // The model is held: the webhook's answer cannot be waiting for the reply.
    const gate = llm.hold(["echo: hello "], ["from slack"]);
    const res = await post("slack", dm, await slackHeaders(dm));
    expect(res.status).toBe(200);
    expect(slack.calls.some((c) => c.path.endsWith("/chat.postMessage") && c.body.channel === "D1001" && text(c) === "echo: hello from slack")).toBe(false);
    gate.release();
    await slack.waitFor((c) => /\/chat\.(postMessage|update)$/.test(c.path) && c.body.channel === "D1001" && text(c) === "echo: hello from slack");
  });

  it("a streamed Markdown reply arrives formatted: Telegram text + entities, Discord Markdown, Slack mrkdwn", async () => {
    const chunks = ["## Plan\n\n", "Run **npm", " ci**, then:\n\n```sh\nnpx wrangler", " deploy\n```"];
    llm
      .text(...chunks)
      .text(...chunks)
      .text(...chunks);

    await post("telegram", JSON.stringify(tg.dm("plan?", 1002)), telegramHeaders());
    const tgFinal = await telegram.waitFor((c) => text(c) === "Plan\n\nRun npm ci, then:\n\nnpx wrangler deploy");
    expect(tgFinal.body.entities).toEqual([
      { type: "bold", offset: 0, length: 4 },
      { type: "bold", offset: 10, length: 6 },
      { type: "pre", offset: 25, length: 19, language: "sh" },
    ]);
    const tgShows = telegram.calls.filter((c) => c.path.endsWith("/sendMessage") || c.path.endsWith("/editMessageText"));
    for (const c of tgShows) {
      expect(c.body.parse_mode).toBeUndefined();
      expect(text(c)).not.toMatch(/\*\*|`|#/);
    }

    const ask = dc.command("ask", { prompt: "plan?" });
    const body = JSON.stringify(ask);
    await post("discord", body, await discordHeaders(body));
    await discord.waitFor(
      (c) => c.method === "PATCH" && c.path.includes(ask.token) && text(c) === "## Plan\n\nRun **npm ci**, then:\n\n```sh\nnpx wrangler deploy\n```",
    );
    for (const c of discord.calls.filter((x) => x.path.includes(ask.token)))
      expect(
        text(c)
          .split("\n")
          .filter((l) => l.startsWith("```")).length % 2,
      ).toBe(0);

    const dm = JSON.stringify(sl.dm("plan?", "U1001", "D1003"));
    await post("slack", dm, await slackHeaders(dm));
    await slack.waitFor((c) => c.body.channel === "D1003" && text(c) === "*Plan*\n\nRun *npm ci*, then:\n\n```\nnpx wrangler deploy\n```");
  });
});

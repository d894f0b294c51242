import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeLlm } from "../support/fake-llm.ts";
import { FakeDiscord, FakeSlack, FakeTelegram, type ApiCall } from "../support/fake-platforms.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { serve, type LoopbackServer } from "../support/http.ts";
import { DISCORD_TEST, DISCORD_TEST_PUBLIC_KEY, SLACK_TEST, TELEGRAM_TEST, discordHeaders, slackHeaders, telegramHeaders } from "../support/signing.ts";
import { startWorker, type DevWorker } from "../support/wrangler-dev.ts";

/** Each platform end to end: signed webhooks into a real `wrangler dev`, replies out to loopback fakes. */
const llm = new FakeLlm();
const telegram = new FakeTelegram();
const discord = new FakeDiscord();
const slack = new FakeSlack();
let servers: LoopbackServer[] = [];
let worker: DevWorker;

beforeAll(async () => {
  servers = await Promise.all([llm, telegram, discord, slack].map((f) => serve((r) => f.handle(r))));
  const [l, t, d, s] = servers.map((x) => x.url);
  worker = await startWorker({
    LLM_BASE_URL: `${l}/v1`,
    TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token,
    TELEGRAM_WEBHOOK_SECRET: TELEGRAM_TEST.secret,
    TELEGRAM_ALLOWED_USERS: "1001,1002",
    TELEGRAM_API_ROOT: t!,
    DISCORD_APPLICATION_ID: DISCORD_TEST.applicationId,
    DISCORD_PUBLIC_KEY: DISCORD_TEST_PUBLIC_KEY,
    DISCORD_BOT_TOKEN: DISCORD_TEST.botToken,
    DISCORD_ALLOWED_USERS: "2001",
    DISCORD_API_BASE: `${d}/api/v10`,
    SLACK_BOT_TOKEN: SLACK_TEST.token,
    SLACK_SIGNING_SECRET: SLACK_TEST.secret,
    SLACK_ALLOWED_USERS: "U1001",
    SLACK_API_URL: `${s}/api/`,
  });
});

afterAll(async () => {
  await worker?.stop();
  await Promise.all(servers.map((s) => s.close()));
});

const post = (platform: string, body: string, headers: Record<string, string>) => fetch(`${worker.url}/webhooks/${platform}`, { method: "POST", headers, body });
const text = (c: ApiCall) => String(c.body.text ?? c.body.content ?? "");

describe("platforms through wrangler dev", () => {
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
    const edit = await discord.waitFor((c) => c.method === "PATCH" && c.path.includes(`/webhooks/${DISCORD_TEST.applicationId}/${ask.token}/messages/@original`));
    expect(edit.body.content).toBe("echo: hello from discord");
  });

  it("Slack: url_verification, then a DM answered in the DM", async () => {
    const challenge = JSON.stringify(sl.challenge());
    expect(await (await post("slack", challenge, await slackHeaders(challenge))).json()).toEqual({ challenge: "the-challenge" });
    const dm = JSON.stringify(sl.dm("hello from slack"));
    const started = Date.now();
    const res = await post("slack", dm, await slackHeaders(dm));
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(3000);
    const reply = await slack.waitFor((c) => c.path.endsWith("/chat.postMessage") && c.body.channel === "D1001");
    expect(text(reply)).toBe("echo: hello from slack");
  });
});

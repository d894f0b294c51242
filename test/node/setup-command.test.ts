import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { FakeDiscord, FakeSlack, FakeTelegram } from "../support/fake-platforms.ts";
import { serve, type LoopbackServer } from "../support/http.ts";
import { CHAT_COMMANDS } from "../../workers/platforms/commands.ts";
import { DISCORD_TEST, SLACK_TEST, TELEGRAM_TEST } from "../support/signing.ts";

const telegram = new FakeTelegram();
const discord = new FakeDiscord();
const slack = new FakeSlack();
let servers: LoopbackServer[] = [];

beforeAll(async () => {
  servers = await Promise.all([serve((r) => telegram.handle(r)), serve((r) => discord.handle(r)), serve((r) => slack.handle(r))]);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function run(argv: string[], env: Record<string, string>) {
  const [tg, dc, sl] = servers.map((s) => s.url);
  const t = memoryIo({ TELEGRAM_API_ROOT: tg!, DISCORD_API_BASE: `${dc!}/api/v10`, SLACK_API_URL: `${sl!}/api/`, ...env });
  const code = await createCli(argv, t.io).run();
  return { code, out: t.out(), err: t.err() };
}

const URL = "https://edge.example.com";

describe("hermes-edge setup", () => {
  it("telegram: checks the token and sets the webhook with the secret and allowed updates", async () => {
    telegram.reset();
    const r = await run(["setup", "telegram", "--url", URL, "--json"], { TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token, TELEGRAM_WEBHOOK_SECRET: "s3cret" });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      bot: { id: TELEGRAM_TEST.botId, username: TELEGRAM_TEST.username },
      webhookUrl: `${URL}/webhooks/telegram`,
      allowedUpdates: ["message"],
      commands: CHAT_COMMANDS.map((c) => c.name),
      telegramSees: { url: `${URL}/webhooks/telegram`, matches: true, pendingUpdates: 0, lastError: null },
    });
    expect(telegram.called("/setWebhook")[0]!.body).toMatchObject({ url: `${URL}/webhooks/telegram`, secret_token: "s3cret", allowed_updates: ["message"] });
    expect(telegram.called("/setMyCommands")[0]!.body).toEqual({ commands: CHAT_COMMANDS.map((c) => ({ command: c.name, description: c.description })) });
  });

  it("telegram: reports what Telegram then sees: updates waiting, its last delivery error, a URL that is not ours", async () => {
    const env = { TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token, TELEGRAM_WEBHOOK_SECRET: "s3cret" };
    telegram.reset();
    // Fields as Telegram's WebhookInfo names them (core.telegram.org/bots/api#webhookinfo).
    telegram.webhookInfo = { pending_update_count: 3, last_error_date: 1_767_225_600, last_error_message: "Wrong response from the webhook: 401 Unauthorized" };
    const ok = await run(["setup", "telegram", "--url", URL], env);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("✓ Telegram reports that webhook URL; 3 updates waiting");
    expect(ok.out).toContain("Telegram's last delivery error (2026-01-01T00:00:00.000Z): Wrong response from the webhook: 401 Unauthorized");
    telegram.webhookInfo = { url: "https://elsewhere.example.com/hook" };
    const other = await run(["setup", "telegram", "--url", URL], env);
    expect(other.code).toBe(1);
    expect(other.out).toContain(`✗ Telegram reports the webhook as https://elsewhere.example.com/hook, not ${URL}/webhooks/telegram`);
  });

  it("telegram: a bad token is one clear error and exit code 1; a missing secret says what to set", async () => {
    const bad = await run(["setup", "telegram", "--url", URL], { TELEGRAM_BOT_TOKEN: "999:nope", TELEGRAM_WEBHOOK_SECRET: "s" });
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/Telegram refused getMe: Unauthorized \(is TELEGRAM_BOT_TOKEN right\?\)/);
    const missing = await run(["setup", "telegram"], { TELEGRAM_BOT_TOKEN: TELEGRAM_TEST.token });
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("this setting is not set (environment or ./.dev.vars):\n  TELEGRAM_WEBHOOK_SECRET: any random string");
  });

  it("telegram: names every missing setting at once, not one per run", async () => {
    const none = await run(["setup", "telegram"], {});
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/these settings are not set \(environment or \.\/\.dev\.vars\):\n {2}TELEGRAM_BOT_TOKEN: .*\n {2}TELEGRAM_WEBHOOK_SECRET: /);
  });

  it("discord: registers the slash commands and the interactions endpoint", async () => {
    discord.reset();
    const r = await run(["setup", "discord", "--url", URL], { DISCORD_BOT_TOKEN: DISCORD_TEST.botToken, DISCORD_APPLICATION_ID: DISCORD_TEST.applicationId });
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'registered /ask, /stop, /new, /resume, /status, /instructions, /compact, /tools, /handoff, /link, /unlink, /sethome, /whoami, /help, "Ask hermes" (message menu)',
    );
    expect(r.out).toContain(`interactions endpoint set to ${URL}/webhooks/discord`);
    const put = discord.calls.find((c) => c.method === "PUT")!;
    expect(put.path).toBe(`/api/v10/applications/${DISCORD_TEST.applicationId}/commands`);
    // Send Messages (11), Embed Links (14), Attach Files (15), Read Message History (16),
    // Create Public Threads (35), Send Messages in Threads (38): 2^11 + … + 2^38.
    expect(2 ** 11 + 2 ** 14 + 2 ** 15 + 2 ** 16 + 2 ** 35 + 2 ** 38).toBe(309237762048);
    expect(r.out).toContain(
      `https://discord.com/oauth2/authorize?client_id=${DISCORD_TEST.applicationId}&scope=bot+applications.commands&permissions=309237762048`,
    );
    expect(r.out).toContain("Send Messages in Threads (38)");
    // The Gateway's intents, and the privileged one checked against the application's flags (1 << 19 here).
    expect(r.out).toContain("GUILDS, GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT");
    expect(r.out).toContain("✓ Message Content Intent is on (application flags)");
  });

  it("discord: says Message Content Intent is off when the application's flags have neither of its bits", async () => {
    discord.reset();
    discord.appFlags = 1 << 23;
    const r = await run(["setup", "discord", "--url", URL, "--json"], {
      DISCORD_BOT_TOKEN: DISCORD_TEST.botToken,
      DISCORD_APPLICATION_ID: DISCORD_TEST.applicationId,
    });
    expect(JSON.parse(r.out)).toMatchObject({ messageContent: "off" });
    const text = await run(["setup", "discord", "--url", URL], {
      DISCORD_BOT_TOKEN: DISCORD_TEST.botToken,
      DISCORD_APPLICATION_ID: DISCORD_TEST.applicationId,
    });
    expect(text.out).toContain("Message Content Intent is off: developer portal → your application → Bot → Privileged Gateway Intents");
  });

  it("discord: a bad token fails clearly", async () => {
    const r = await run(["setup", "discord", "--url", URL], { DISCORD_BOT_TOKEN: "wrong", DISCORD_APPLICATION_ID: DISCORD_TEST.applicationId });
    expect(r.code).toBe(1);
    expect(r.err).toContain("HTTP 401");
    expect(r.err).toContain("DISCORD_BOT_TOKEN");
  });

  it("slack: prints the manifest with the event URL, scopes and events, and checks the token", async () => {
    const r = await run(["setup", "slack", "--url", URL, "--json"], { SLACK_BOT_TOKEN: SLACK_TEST.token });
    expect(r.code).toBe(0);
    const { manifest, token } = JSON.parse(r.out) as {
      manifest: { settings: { event_subscriptions: { request_url: string; bot_events: string[] } }; oauth_config: { scopes: { bot: string[] } } };
      token: { teamId: string };
    };
    expect(manifest.settings.event_subscriptions.request_url).toBe(`${URL}/webhooks/slack`);
    expect(manifest.settings.event_subscriptions.bot_events).toContain("app_mention");
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(["chat:write", "files:read"]));
    expect(token.teamId).toBe(SLACK_TEST.team);
    const bad = await run(["setup", "slack", "--url", URL], { SLACK_BOT_TOKEN: "xoxb-wrong" });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("invalid_auth");
  });

  it("warns when the Worker's URL is not public https, for every platform", async () => {
    const r = await run(["setup", "slack", "--url", "http://127.0.0.1:8787"], {});
    expect(r.code).toBe(0);
    expect(r.err).toContain("warning: http://127.0.0.1:8787 is not a public https URL; slack cannot reach it");
    const quiet = await run(["setup", "slack", "--url", URL], {});
    expect(quiet.err).toBe("");
  });

  it("refuses an unknown platform with the usage", async () => {
    const r = await run(["setup", "irc"], {});
    expect(r.code).toBe(2);
    expect(r.err).toContain("usage: hermes-edge setup");
  });
});

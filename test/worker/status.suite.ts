import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../workers/db/migrations.ts";
import { runMaintenance } from "../../workers/maintenance.ts";
import { SLACK_TEST, WHATSAPP_TEST } from "../support/signing.ts";
import { call } from "./helpers.ts";
import { discord, llm, telegram, whatsapp } from "./setup.ts";

type Status = {
  version: string;
  model: { provider: string; model: string; detail: string };
  platforms: Array<{ name: string; enabled: boolean; missing: string[]; detail: string | null; home_channel: unknown }>;
  migrations: { expected: number; applied: number; missing: string[] };
  cron: { last_run: number | null };
  problems: Array<{ area: string; problem: string; fix: string }>;
};

async function status(): Promise<Status> {
  const res = await call("/v1/status");
  expect(res.status).toBe(200);
  return (await res.json()) as Status;
}

/** The Worker here is reached as http://edge.test: its webhooks must point there. */
const ORIGIN = "http://edge.test";

describe("GET /v1/status", () => {
  it("a Worker set up right has no problems: the provider lists the model, each platform delivers here, migrations applied, the cron ran", async () => {
    llm.models = ["fake-model", "other"];
    telegram.webhookUrl = `${ORIGIN}/webhooks/telegram`;
    discord.interactionsUrl = `${ORIGIN}/webhooks/discord`;
    await runMaintenance(env, Date.now());
    const s = await status();
    // Home channels are shared with other tests (/sethome): a platform without one is said so.
    const homeless = s.platforms.filter((p) => p.enabled && !p.home_channel).map((p) => p.name);
    expect(s.problems).toEqual(
      homeless.map((name) => ({
        area: name,
        problem: `no home channel: handoffs to ${name} need one`,
        fix: `send /sethome in the chat that should receive them (or set ${name.toUpperCase()}_HOME_CHANNEL)`,
      })),
    );
    expect(s.model).toEqual({ provider: "openai", model: "fake-model", detail: "answers; lists fake-model" });
    expect(s.migrations).toEqual({ expected: MIGRATIONS.length, applied: MIGRATIONS.length, missing: [] });
    // Signal is not bridged in this project (test/worker-relay/signal.suite.ts has its status).
    expect(s.platforms.filter((p) => p.enabled).map((p) => [p.name, p.enabled, p.detail])).toEqual([
      ["telegram", true, `webhook ${ORIGIN}/webhooks/telegram · 0 update(s) waiting`],
      ["discord", true, `application Hermes · interactions ${ORIGIN}/webhooks/discord`],
      ["slack", true, `workspace ${SLACK_TEST.team} · bot <@${SLACK_TEST.botUserId}> · events should go to ${ORIGIN}/webhooks/slack`],
      ["whatsapp", true, `number +1 555-010-0001 (Hermes Test) · quality GREEN · webhooks should go to ${ORIGIN}/webhooks/whatsapp`],
      [
        "matrix",
        true,
        `bot @hermes:example.org on https://matrix.test · the homeserver reached the Worker in 12 ms · transactions should go to ${ORIGIN}/webhooks/matrix`,
      ],
    ]);
    expect(typeof s.cron.last_run).toBe("number");
  });

  it("names each problem with the command that fixes it", async () => {
    llm.models = ["gpt-4o"];
    telegram.webhookUrl = "https://old.example/webhooks/telegram";
    telegram.webhookInfo = {
      last_error_date: Math.floor(Date.now() / 1000) - 120,
      last_error_message: "Wrong response from the webhook: 401 Unauthorized",
      pending_update_count: 7,
    };
    discord.interactionsUrl = "";
    await env.DB.prepare("UPDATE meta SET value = ? WHERE key = 'cron_last_run'")
      .bind(String(Date.now() - 60 * 60_000))
      .run();
    const s = await status();
    const by = (area: string) => s.problems.filter((p) => p.area === area && !p.problem.startsWith("no home channel"));
    expect(by("model")).toEqual([
      { area: "model", problem: "https://llm.test/v1 does not list the model fake-model", fix: "set LLM_MODEL to one it lists (e.g. gpt-4o)" },
    ]);
    expect(by("telegram").map((p) => p.problem)).toEqual([
      `Telegram delivers to https://old.example/webhooks/telegram, not ${ORIGIN}/webhooks/telegram`,
      "Telegram's last delivery failed 2 min ago: Wrong response from the webhook: 401 Unauthorized",
    ]);
    expect(by("telegram")[0]!.fix).toBe(`npx hermes-edge setup telegram --url ${ORIGIN}`);
    expect(by("discord")).toEqual([
      {
        area: "discord",
        problem: "Discord has no interactions endpoint for this application: slash commands go nowhere",
        fix: `npx hermes-edge setup discord --url ${ORIGIN}`,
      },
    ]);
    expect(by("cron")).toEqual([
      { area: "cron", problem: "the cron last ran 60 min ago", fix: "check [triggers] crons in wrangler.toml and deploy again (npm run deploy)" },
    ]);
    expect(s.platforms[0]!.detail).toContain("7 update(s) waiting");
  });

  it("a provider that refuses the key, or a platform that refuses its token, is a problem, not an error; no secret appears", async () => {
    llm.key = "another-key";
    telegram.failNext("getWebhookInfo", 401, { ok: false, error_code: 401, description: "Unauthorized" });
    whatsapp.failNext(WHATSAPP_TEST.phoneNumberId, 401, { error: { message: "Error validating access token: Session has expired", code: 190 } });
    try {
      const s = await status();
      expect(s.problems.find((p) => p.area === "model")).toEqual({
        area: "model",
        problem: "https://llm.test/v1 refused LLM_API_KEY (HTTP 401)",
        fix: "set the right key: npx wrangler secret put LLM_API_KEY",
      });
      expect(s.problems.find((p) => p.area === "telegram")).toMatchObject({
        problem: "Telegram refused getWebhookInfo: Unauthorized",
        fix: "set the right token: npx wrangler secret put TELEGRAM_BOT_TOKEN",
      });
      expect(s.problems.find((p) => p.area === "whatsapp")).toMatchObject({
        problem: "Meta refused the phone number lookup: WhatsApp phone number lookup: Error validating access token: Session has expired (code 190)",
        fix: "check WHATSAPP_PHONE_NUMBER_ID and the token: npx wrangler secret put WHATSAPP_ACCESS_TOKEN",
      });
      const text = JSON.stringify(s);
      for (const secret of ["test-llm-key", env.TELEGRAM_BOT_TOKEN, env.SLACK_BOT_TOKEN, env.DISCORD_BOT_TOKEN, env.WHATSAPP_ACCESS_TOKEN])
        expect(text).not.toContain(secret);
    } finally {
      llm.key = "test-llm-key";
    }
  });

  it("needs the token", async () => {
    expect((await call("/v1/status", { token: null })).status).toBe(401);
  });
});

import { env } from "../worker/config.ts";
import { describe, expect, it } from "vitest";
import { joinAccounts } from "../../workers/db/people.ts";
import { dc, sl, tg } from "../support/fixtures.ts";
import { settle, toDiscord, toSlack, toTelegram } from "../worker/platform-helpers.ts";
import { discord, llm, slack, telegram } from "../worker/setup.ts";

// This project relays Telegram and WhatsApp to gateways and runs with DAILY_TOKEN_BUDGET=50000 (vitest.config.ts).
describe("/handoff and gateway-run platforms", () => {
  it("is refused with the reason from a relayed chat, and to a relayed platform; nothing reaches the gateway", async () => {
    await toTelegram(tg.command("handoff", "slack", 1001));
    await settle();
    expect(telegram.texts(1001).at(-1)).toBe(
      "Telegram's conversations run on a relay gateway, which keeps their transcripts: they cannot be handed off from here.",
    );
    await toSlack(sl.dm("hello", "U1021", "D1021"));
    await settle();
    await toSlack(sl.slash("handoff telegram", "U1021", "D1021"));
    await settle();
    expect(slack.responses().at(-1)).toBe(
      "Telegram's conversations run on a relay gateway, which keeps their transcripts: a session cannot be handed there from here.",
    );
  });
});

describe("a person's DAILY_TOKEN_BUDGET", () => {
  it("counts every linked account: tokens used on Slack stop a turn on the same person's Discord", async () => {
    await joinAccounts(env.DB, { platform: "slack", userId: "U1021" }, { platform: "discord", userId: "2021" }, Date.now(), () => "person_relay_budget");
    llm.then({ kind: "text", chunks: ["a long answer"], usage: { prompt_tokens: 40_000, completion_tokens: 15_000 } });
    await toSlack(sl.dm("first question", "U1021", "D1021"));
    await settle();
    expect(slack.texts("D1021").at(-1)).toBe("a long answer");
    const calls = llm.calls.length;
    await toDiscord(dc.command("ask", { prompt: "and on Discord?" }, { dm: true, userId: "2021", channelId: "772021" }));
    await settle();
    expect(discord.contents().at(-1)).toMatch(/^You have used today's allowance of 50,000 tokens \(55,\d{3} so far\)/);
    expect(llm.calls.length).toBe(calls);
  });
});

import { describe, expect, it } from "vitest";
import { discordHealth, messageContentIntent } from "../../workers/platforms/discord/health.ts";

/** GET /applications/@me answered with these flags (an injected fetch: no network). */
const app = (flags: number | undefined) =>
  (async () => Response.json({ name: "Hermes", interactions_endpoint_url: "https://he.example/webhooks/discord", flags })) as unknown as typeof fetch;

describe("Discord's Message Content Intent, from the application's flags", () => {
  it("reads GATEWAY_MESSAGE_CONTENT (1 << 18) and _LIMITED (1 << 19); no flags: unknown", () => {
    expect(messageContentIntent(1 << 18)).toBe("on");
    expect(messageContentIntent((1 << 19) | (1 << 23))).toBe("on");
    expect(messageContentIntent(1 << 23)).toBe("off");
    expect(messageContentIntent(undefined)).toBe("unknown");
  });

  it("status reports the intent off as a problem only with DISCORD_GATEWAY=on", async () => {
    const opts = { botToken: "t", apiBase: "https://discord.test/api/v10", fetch: app(0) };
    const on = await discordHealth({ ...opts, gateway: true }, "https://he.example");
    expect(on.problems).toEqual([expect.objectContaining({ fix: expect.stringContaining("Message Content Intent") })]);
    expect((await discordHealth({ ...opts, gateway: false }, "https://he.example")).problems).toEqual([]);
    expect((await discordHealth({ ...opts, fetch: app(1 << 19), gateway: true }, "https://he.example")).problems).toEqual([]);
  });
});

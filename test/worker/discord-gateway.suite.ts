import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call } from "./helpers.ts";
import { discord } from "./setup.ts";

/**
 * The DiscordGateway object in workerd with DISCORD_GATEWAY unset (the default): it opens
 * nothing, arms no alarm, and status shows no connection. Its protocol and connection are
 * tested in Node (test/node/discord-gateway-*.test.ts) and through wrangler dev
 * (test/e2e/discord-gateway.e2e.ts), where the object holds a real socket.
 */
describe("DiscordGateway with DISCORD_GATEWAY off", () => {
  it("is off: no socket, no alarm, no GET /gateway/bot, and /v1/platforms shows no connection", async () => {
    const stub = env.DISCORD_GATEWAY_OBJECT.getByName("bot");
    expect(await stub.ensure()).toEqual({ state: "off" });
    expect(await stub.status()).toEqual({ state: "off" });
    await runInDurableObject(stub, async (_instance, state) => expect(await state.storage.getAlarm()).toBeNull());
    expect(discord.calls.filter((c) => c.path.includes("/gateway/bot"))).toEqual([]);
    const res = await call("/v1/platforms");
    const { platforms } = (await res.json()) as { platforms: Array<{ name: string; connection: unknown }> };
    expect(platforms.every((p) => p.connection === null)).toBe(true);
  });
});

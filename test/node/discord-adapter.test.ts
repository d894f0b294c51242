import { describe, expect, it } from "vitest";
import { DiscordAdapter, discordTarget, redact } from "../../workers/platforms/discord/index.ts";
import { PlatformApiError } from "../../workers/platforms/types.ts";

describe("regression: Discord interaction tokens in error messages", () => {
  it("never puts the interaction token into an error (which gets logged)", async () => {
    const token = "aW50ZXJhY3Rpb246c2VjcmV0LXRva2Vu";
    const adapter = new DiscordAdapter({
      applicationId: "5550001",
      publicKey: "00",
      apiBase: "https://discord.example/api/v10",
      fetch: async () => Response.json({ message: "Unknown Webhook" }, { status: 404 }),
    });
    const target = discordTarget("1", null, false, { applicationId: "5550001", token });
    const errors: unknown[] = [];
    for (const call of [() => adapter.show(target, "hi", [], "final"), () => adapter.post(target, "more"), () => adapter.show(target, "x", ["99"], "live")]) {
      await call().catch((e: unknown) => errors.push(e));
    }
    expect(errors).toHaveLength(3);
    for (const e of errors) {
      expect(e).toBeInstanceOf(PlatformApiError);
      expect((e as Error).message).not.toContain(token);
      expect((e as PlatformApiError).code).toBe("not_found");
    }
    expect(redact(`webhooks/5550001/${token}/messages/@original`)).toBe("webhooks/5550001/…/messages/@original");
  });
});

import { describe, expect, it } from "vitest";
import { platformSteps } from "../../workers/console/web/steps.ts";
import type { Platform } from "../../workers/console/web/types.ts";
import { settingKind } from "../../workers/settings/catalog.ts";

const discord: Platform = {
  name: "discord",
  enabled: false,
  relay: false,
  home_channel: null,
  missing: ["DISCORD_BOT_TOKEN", "DISCORD_PUBLIC_KEY"],
  missing_settings: [
    { name: "DISCORD_BOT_TOKEN", kind: "secret" },
    { name: "DISCORD_PUBLIC_KEY", kind: "var" },
  ],
  allowed_users: { setting: "DISCORD_ALLOWED_USERS", set: false },
  setup: "npx hermes-edge setup discord --url https://edge.example.workers.dev",
};
const all = (steps: Array<{ text: string; code?: string }>) => steps.map((s) => `${s.text}\n${s.code ?? ""}`).join("\n");

describe("regression: the Platforms page gave wrong steps for a local Worker", () => {
  it("locally: every setting (the allowed users too) goes in .dev.vars, a tunnel reaches 127.0.0.1, and no wrangler secret put", () => {
    const text = all(platformSteps(discord, "local", "http://127.0.0.1:8787"));
    expect(text).toContain(".dev.vars");
    expect(text).toContain("DISCORD_BOT_TOKEN=…\nDISCORD_PUBLIC_KEY=…\nDISCORD_ALLOWED_USERS=<your Discord user id>");
    expect(text).toContain("cloudflared tunnel --url http://127.0.0.1:8787");
    expect(text).toContain("npx hermes-edge setup discord --url https://<the tunnel's address>");
    expect(text).not.toContain("wrangler secret put");
    expect(text).not.toContain("setup discord --url http://127.0.0.1");
  });

  it("deployed: secrets by wrangler secret put, vars (DISCORD_PUBLIC_KEY, the allowed users) under [vars], then the setup command", () => {
    const text = all(platformSteps(discord, "deployed", "https://edge.example.workers.dev"));
    expect(text).toContain("npx wrangler secret put DISCORD_BOT_TOKEN");
    expect(text).not.toContain("secret put DISCORD_PUBLIC_KEY");
    expect(text).toContain('[vars]\nDISCORD_PUBLIC_KEY = "…"\nDISCORD_ALLOWED_USERS = "<your Discord user id>"');
    expect(text).toContain("npx hermes-edge setup discord --url https://edge.example.workers.dev");
    expect(text).not.toContain(".dev.vars");
  });

  it("always says who may talk: nobody until *_ALLOWED_USERS is set, and what it holds once it is", () => {
    for (const where of ["local", "deployed"] as const) {
      expect(platformSteps(discord, where, "http://127.0.0.1:8787").at(-1)?.text).toMatch(/^Nobody may talk to the bot until DISCORD_ALLOWED_USERS lists/);
      const ready = platformSteps(
        { ...discord, enabled: true, missing: [], missing_settings: [], allowed_users: { setting: "DISCORD_ALLOWED_USERS", set: true } },
        where,
        "https://x.test",
      );
      expect(ready.at(-1)?.text).toMatch(/^DISCORD_ALLOWED_USERS is set: only the users it lists/);
      expect(all(ready)).not.toMatch(/secret put|\[vars\]|\.dev\.vars/);
    }
  });

  it("a setting's kind (secret or var) for the console's steps comes from the settings catalog", () => {
    expect(settingKind("API_TOKEN")).toBe("secret");
    expect(settingKind("RELAY_SECRETS")).toBe("secret");
    expect(settingKind("WHATSAPP_ACCESS_TOKEN")).toBe("secret");
    expect(settingKind("WHATSAPP_PHONE_NUMBER_ID")).toBe("var");
    expect(settingKind("DISCORD_PUBLIC_KEY")).toBe("var");
    expect(settingKind("TELEGRAM_ALLOWED_USERS")).toBe("var");
    expect(settingKind("MCP_TOKEN_SEARCH")).toBe("secret");
  });
});

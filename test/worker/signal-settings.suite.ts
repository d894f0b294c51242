import { describe, expect, it } from "vitest";
import { allowList, isAllowed, settings } from "../../workers/settings.ts";

/** A fresh env object each time (settings are parsed once per env object). */
const envOf = (vars: Record<string, string>) => ({ ...vars }) as unknown as Env;
const messages = (vars: Record<string, string>) => settings(envOf(vars)).problems.map((p) => p.message);

describe("BRIDGE_PLATFORMS", () => {
  it("enables Signal, bridged by a gateway RELAY_SECRETS lists; it is never relayed", () => {
    const s = settings(envOf({ RELAY_SECRETS: "home:s3cret", BRIDGE_PLATFORMS: "signal:home" }));
    expect(s.platforms.signal).toMatchObject({ enabled: true, bridge: "home", gateway: null, missing: [] });
    expect(s.problems).toEqual([]);
  });

  it("leaves Signal off, saying why, for a gateway RELAY_SECRETS does not list, and names what is missing", () => {
    const vars = { RELAY_SECRETS: "home:s3cret", BRIDGE_PLATFORMS: "signal:laptop" };
    expect(settings(envOf(vars)).platforms.signal).toMatchObject({ enabled: false, bridge: null, missing: ["BRIDGE_PLATFORMS"] });
    expect(messages(vars).join("\n")).toContain("add <gatewayId>:<secret> to RELAY_SECRETS");
  });

  it("refuses to bridge a platform with webhooks, and to relay Signal", () => {
    expect(messages({ RELAY_SECRETS: "home:s3cret", BRIDGE_PLATFORMS: "telegram:home" }).join("\n")).toContain("not a platform a gateway bridges (signal)");
    const relayed = { RELAY_SECRETS: "home:s3cret", RELAY_PLATFORMS: "signal:home" };
    expect(settings(envOf(relayed)).platforms.signal).toMatchObject({ enabled: false, gateway: null });
    expect(messages(relayed).join("\n")).toContain("a gateway bridges it (BRIDGE_PLATFORMS)");
  });
});

describe("allow lists by number or UUID", () => {
  it("match a Signal sender by the UUID that keys them or the number beside it", () => {
    const list = allowList("+15550001002,1a111111-1111-4111-8111-111111111111");
    expect(isAllowed(list, "2b222222-2222-4222-8222-222222222222", "+15550001002")).toBe(true);
    expect(isAllowed(list, "1a111111-1111-4111-8111-111111111111", null)).toBe(true);
    expect(isAllowed(list, "3c333333-3333-4333-8333-333333333333", "+15550009998")).toBe(false);
    expect(isAllowed(list, "3c333333-3333-4333-8333-333333333333")).toBe(false);
  });
});

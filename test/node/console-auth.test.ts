import { describe, expect, it } from "vitest";
import { issueSession, readCookie, SESSION_TTL_SECONDS, verifySession } from "../../workers/console/cookie.ts";
import {
  attempt,
  BASE_DELAY_MS,
  clientKey,
  delayAfter,
  FORGET_AFTER_MS,
  FREE_ATTEMPTS,
  MAX_DELAY_MS,
  type ThrottleState,
  CLEAR_TRUST_MS,
  RecentlyCleared,
} from "../../workers/console/throttle.ts";
import { chatLink } from "../../workers/platforms/links.ts";
import { discordThreadLink } from "../../workers/platforms/discord/link.ts";

describe("console session values", () => {
  const now = 1_800_000_000_000;

  it("verify what they issue until they expire, and nothing signed under another token", async () => {
    const value = await issueSession("token-a", now);
    expect(await verifySession("token-a", value, now)).toBe(true);
    expect(await verifySession("token-a", value, now + SESSION_TTL_SECONDS * 1000 - 1)).toBe(true);
    expect(await verifySession("token-a", value, now + SESSION_TTL_SECONDS * 1000)).toBe(false);
    expect(await verifySession("token-b", value, now)).toBe(false);
  });

  it("refuse a changed expiry (a longer life cannot be forged) and malformed values", async () => {
    const [exp, nonce, sig] = (await issueSession("t", now)).split(".");
    expect(await verifySession("t", `${Number(exp) + 3600}.${nonce}.${sig}`, now)).toBe(false);
    for (const bad of ["", "t", `${exp}.${nonce}`, `${exp}.${nonce}.${sig}.x`, `${exp}.${nonce}.${sig!.toUpperCase()}`])
      expect(await verifySession("t", bad, now), bad).toBe(false);
  });

  it("are read from a Cookie header by exact name", () => {
    expect(readCookie("a=1; hermes_console=v; b=2", "hermes_console")).toBe("v");
    expect(readCookie("xhermes_console=v", "hermes_console")).toBeNull();
    expect(readCookie(null, "hermes_console")).toBeNull();
  });
});

describe("sign-in throttle", () => {
  it("lets the free attempts through, then doubles the wait up to the cap", () => {
    expect(Array.from({ length: FREE_ATTEMPTS }, (_, i) => delayAfter(i + 1))).toEqual(Array(FREE_ATTEMPTS).fill(0));
    expect(delayAfter(FREE_ATTEMPTS + 1)).toBe(BASE_DELAY_MS);
    expect(delayAfter(FREE_ATTEMPTS + 2)).toBe(2 * BASE_DELAY_MS);
    expect(delayAfter(FREE_ATTEMPTS + 40)).toBe(MAX_DELAY_MS);
  });

  it("refuses an attempt during the wait, takes the next one after it, and forgets a quiet client", () => {
    let state: ThrottleState | null = null;
    let t = 0;
    for (let i = 0; i <= FREE_ATTEMPTS; i++) {
      const r = attempt(state, t);
      expect(r.ok).toBe(true);
      if (r.ok) state = r.state;
    }
    expect(attempt(state, t + BASE_DELAY_MS - 1)).toEqual({ ok: false, retryAfterMs: 1 });
    t += BASE_DELAY_MS;
    const after = attempt(state, t);
    expect(after).toEqual({ ok: true, state: { failures: FREE_ATTEMPTS + 2, lastAt: t, blockedUntil: t + 2 * BASE_DELAY_MS } });
    if (after.ok)
      expect(attempt(after.state, t + FORGET_AFTER_MS)).toEqual({
        ok: true,
        state: { failures: 1, lastAt: t + FORGET_AFTER_MS, blockedUntil: t + FORGET_AFTER_MS },
      });
  });

  it("keys IPv4 clients by address and IPv6 clients by their /64, however written", () => {
    expect(clientKey("203.0.113.9")).toBe("203.0.113.9");
    expect(clientKey("2001:db8:0:1::5")).toBe("2001:db8:0:1::/64");
    expect(clientKey("2001:0DB8:0000:0001:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:0:1::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
    expect(clientKey(null)).toBe("unknown");
  });
});

describe("clients the guard cleared lately (the /v1 success path without a guard round trip)", () => {
  it("trusts a cleared client for a minute, never one it was not told about, and forgets it on a wrong token or when full", () => {
    const recent = new RecentlyCleared();
    expect(recent.trusted("203.0.113.1", 0)).toBe(false);
    recent.cleared("203.0.113.1", 1_000);
    expect(recent.trusted("203.0.113.1", 1_000 + CLEAR_TRUST_MS - 1)).toBe(true);
    expect(recent.trusted("203.0.113.1", 1_000 + CLEAR_TRUST_MS)).toBe(false);
    expect(recent.trusted("203.0.113.1", 1_001)).toBe(false); // expired entries are gone
    recent.cleared("203.0.113.2", 0);
    recent.failed("203.0.113.2");
    expect(recent.trusted("203.0.113.2", 1)).toBe(false);
    for (let i = 0; i <= 1_000; i++) recent.cleared(`10.0.${i >> 8}.${i & 255}`, 0);
    expect(recent.trusted("10.0.0.0", 1)).toBe(false); // the oldest of 1,001 went first
    expect(recent.trusted("10.0.3.232", 1)).toBe(true);
  });
});

describe("chat links", () => {
  it("link Telegram supergroup topics and Slack channels; nothing else is guessed", () => {
    expect(chatLink("telegram", "-100777", "42")).toBe("https://t.me/c/777/42");
    expect(chatLink("telegram", "-100777", null)).toBe("https://t.me/c/777");
    expect(chatLink("telegram", "12345", null)).toBeNull();
    expect(chatLink("slack", "C0123ABC", "1700000000.0001")).toBe("https://slack.com/app_redirect?channel=C0123ABC");
    expect(chatLink("slack", "C0123ABC&x=1", null)).toBeNull();
    expect(chatLink("discord", "123", "456")).toBeNull();
    expect(discordThreadLink("880000000000000001", "456")).toBe("https://discord.com/channels/880000000000000001/456");
    expect(discordThreadLink(undefined, "456")).toBeNull();
    expect(discordThreadLink("88/../x", "456")).toBeNull();
    expect(chatLink("irc", "x", null)).toBeNull();
  });
});

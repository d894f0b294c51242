import { describe, expect, it, vi } from "vitest";
import { SlackAdapter } from "../../workers/platforms/slack/index.ts";
import { TelegramAdapter, WARM_STALE_MS } from "../../workers/platforms/telegram/index.ts";

/**
 * The bot's username (Telegram getMe) and the workspace (Slack auth.test) are kept per isolate
 * once known. One adapter serves every object of an isolate: a pending call shared between
 * them is a promise resolved by one object's I/O and awaited in another's request, the pattern
 * suspected of duplicate answers under load (docs/startup.md). So only answers are kept.
 */

/** A fetch that holds every call until `release()`, answering each with `body`; counts the calls to `path`. */
function heldFetch(path: string, body: () => unknown) {
  const waiting: Array<() => void> = [];
  let calls = 0;
  let fail = false;
  const fetch: typeof globalThis.fetch = async (input) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.includes(path)) calls++;
    await new Promise<void>((resolve) => waiting.push(resolve));
    if (fail) throw new TypeError("fetch failed");
    return Response.json(body());
  };
  return {
    fetch,
    calls: () => calls,
    failNext: (f: boolean) => void (fail = f),
    /**
     * Waits (event-loop turns, no timer) until `inFlight` calls are held at once, or a bounded
     * number of turns passed (the adapter's first call loads grammY from disk first), then lets
     * every call answer.
     */
    async release(inFlight = 1) {
      for (let i = 0; i < 100_000 && waiting.length < inFlight; i++) await new Promise((r) => setImmediate(r));
      for (const go of waiting.splice(0)) go();
      await new Promise((r) => setImmediate(r));
    },
  };
}

const unique = () => crypto.randomUUID().slice(0, 8);

describe("Telegram's bot username", () => {
  it("two first callers at once each ask getMe (no pending call shared); then it is kept", async () => {
    const net = heldFetch("/getMe", () => ({ ok: true, result: { id: 1, is_bot: true, first_name: "B", username: "hermes_bot" } }));
    const adapter = new TelegramAdapter({ token: `1:${unique()}`, webhookSecret: "s", apiRoot: "https://telegram.test", fetch: net.fetch });
    const both = Promise.all([adapter.username(), adapter.username()]);
    await net.release(2);
    expect(await both).toEqual(["hermes_bot", "hermes_bot"]);
    expect(net.calls()).toBe(2);
    expect(await adapter.username()).toBe("hermes_bot");
    expect(net.calls()).toBe(2);
  });

  it("a failed getMe answers null and keeps nothing: the next caller asks again", async () => {
    const net = heldFetch("/getMe", () => ({ ok: true, result: { id: 1, is_bot: true, first_name: "B", username: "hermes_bot" } }));
    const adapter = new TelegramAdapter({ token: `1:${unique()}`, webhookSecret: "s", apiRoot: "https://telegram.test", fetch: net.fetch });
    net.failNext(true);
    const first = adapter.username();
    await net.release();
    expect(await first).toBeNull();
    net.failNext(false);
    const second = adapter.username();
    await net.release();
    expect(await second).toBe("hermes_bot");
    expect(net.calls()).toBe(2);
  });
});

describe("Telegram's bot username, learnt after a webhook (warm)", () => {
  const me = () => ({ ok: true, result: { id: 1, is_bot: true, first_name: "B", username: "hermes_bot" } });

  it("regression: every webhook of a cold isolate's first burst asked getMe; while one asks, the others do not", async () => {
    const net = heldFetch("/getMe", me);
    const adapter = new TelegramAdapter({ token: `1:${unique()}`, webhookSecret: "s", apiRoot: "https://telegram.test", fetch: net.fetch });
    const burst = Promise.all(Array.from({ length: 5 }, () => adapter.warm()));
    await net.release(1);
    await burst;
    expect(net.calls()).toBe(1);
    expect(adapter.knownUsername()).toBe("hermes_bot");
  });

  it("a failed warm-up holds nothing back: the next webhook asks again", async () => {
    const net = heldFetch("/getMe", me);
    const adapter = new TelegramAdapter({ token: `1:${unique()}`, webhookSecret: "s", apiRoot: "https://telegram.test", fetch: net.fetch });
    net.failNext(true);
    const first = adapter.warm();
    await net.release();
    await first;
    expect(adapter.knownUsername()).toBeNull();
    net.failNext(false);
    const second = adapter.warm();
    await net.release();
    await second;
    expect(net.calls()).toBe(2);
    expect(adapter.knownUsername()).toBe("hermes_bot");
  });

  it("a warm-up unanswered for longer than a getMe may take (its request gone) no longer holds the next one back", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const net = heldFetch("/getMe", me);
      const adapter = new TelegramAdapter({ token: `1:${unique()}`, webhookSecret: "s", apiRoot: "https://telegram.test", fetch: net.fetch });
      const first = adapter.warm(); // held unanswered
      for (let i = 0; i < 100_000 && net.calls() < 1; i++) await new Promise((r) => setImmediate(r));
      await adapter.warm();
      expect(net.calls()).toBe(1);
      vi.setSystemTime(Date.now() + WARM_STALE_MS + 1);
      const next = adapter.warm();
      await net.release(2);
      await Promise.all([first, next]);
      expect(net.calls()).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("Slack's workspace", () => {
  it("two first callers at once each ask auth.test (no pending call shared); then it is kept", async () => {
    const net = heldFetch("auth.test", () => ({ ok: true, team_id: "T123", user_id: "U1" }));
    const adapter = new SlackAdapter({ botToken: `xoxb-${unique()}`, signingSecret: "s", apiUrl: "https://slack.test/api/", fetch: net.fetch });
    const both = Promise.all([adapter.workspaceId(), adapter.workspaceId()]);
    await net.release(2);
    expect(await both).toEqual(["T123", "T123"]);
    expect(net.calls()).toBe(2);
    expect(await adapter.workspaceId()).toBe("T123");
    expect(net.calls()).toBe(2);
  });
});

import { describe, expect, it } from "vitest";
import { styleFor } from "../../cli/io.ts";
import { createCli } from "../../cli/main.ts";
import { connectionText, formatStatus, type StatusReport } from "../../cli/status.ts";
import { memoryIo } from "../support/cli-io.ts";
import { serve } from "../support/http.ts";

const plain = styleFor({ isTTY: false }, {});

describe("hermes-edge status output", () => {
  it("marks the parts with problems (a setting not understood too), lists each with its fix, and shows a platform that is not enabled without calling it a problem", () => {
    const now = Date.UTC(2026, 11, 1, 12);
    const report: StatusReport = {
      url: "https://he.example.workers.dev",
      reachable: true,
      version: "0.1.0",
      token: { accepted: true, source: "profile 'default'" },
      worker: {
        version: "0.1.0",
        model: { provider: "openai", model: "gpt-4o-mini", detail: "answers; lists gpt-4o-mini" },
        platforms: [
          {
            name: "telegram",
            enabled: true,
            missing: [],
            relay: null,
            home_channel: { chat_id: "-100", thread_id: "7", source: "sethome" },
            detail: "webhook https://old.example/webhooks/telegram · 3 update(s) waiting",
          },
          { name: "discord", enabled: false, missing: ["DISCORD_PUBLIC_KEY", "DISCORD_BOT_TOKEN"], relay: null, home_channel: null, detail: null },
          {
            name: "slack",
            enabled: true,
            missing: [],
            relay: "gw1",
            home_channel: null,
            detail: "workspace T1 · bot <@U1> · events should go to https://he.example.workers.dev/webhooks/slack",
          },
        ],
        gateways: [{ id: "gw1", connected: false, platforms: [], buffered: 4, dropped: 0 }],
        migrations: { expected: 9, applied: 9, missing: [] },
        cron: { last_run: now - 90_000 },
        setting_problems: [
          {
            setting: "DAILY_TOKEN_BUDGET",
            value: "10k",
            message: "DAILY_TOKEN_BUDGET=10k is not a positive whole number: the budget is off (unlimited); write a number such as 10000",
          },
        ],
      },
      problems: [
        {
          area: "settings",
          problem: "DAILY_TOKEN_BUDGET=10k is not a positive whole number: the budget is off (unlimited); write a number such as 10000",
          fix: "correct DAILY_TOKEN_BUDGET in wrangler.toml [vars]",
        },
        {
          area: "telegram",
          problem: "Telegram delivers to https://old.example/webhooks/telegram, not https://he.example.workers.dev/webhooks/telegram",
          fix: "npx hermes-edge setup telegram --url https://he.example.workers.dev",
        },
        { area: "relay", problem: "gateway gw1 serves slack but is not connected (4 message(s) waiting)", fix: "run it: … npx hermes-edge gateway" },
      ],
    };
    expect(formatStatus(report, now, plain)).toEqual([
      "hermes-edge status · https://he.example.workers.dev",
      "✓ Worker     hermes-edge 0.1.0",
      "✓ token      accepted (profile 'default')",
      "✗ settings   1 not understood (below)",
      "✓ model      openai gpt-4o-mini: answers; lists gpt-4o-mini",
      "✗ telegram   webhook https://old.example/webhooks/telegram · 3 update(s) waiting · home -100/7",
      "– discord    not enabled (set DISCORD_PUBLIC_KEY, DISCORD_BOT_TOKEN)",
      "✓ slack      relayed to gateway gw1 · no home channel",
      "✗ gateway    gw1 not connected · 4 buffered",
      "✓ D1         9/9 migrations applied",
      "✓ cron       ran 1m ago",
      "",
      "3 problems:",
      "  ✗ settings: DAILY_TOKEN_BUDGET=10k is not a positive whole number: the budget is off (unlimited); write a number such as 10000",
      "    fix: correct DAILY_TOKEN_BUDGET in wrangler.toml [vars]",
      "  ✗ telegram: Telegram delivers to https://old.example/webhooks/telegram, not https://he.example.workers.dev/webhooks/telegram",
      "    fix: npx hermes-edge setup telegram --url https://he.example.workers.dev",
      "  ✗ relay: gateway gw1 serves slack but is not connected (4 message(s) waiting)",
      "    fix: run it: … npx hermes-edge gateway",
    ]);
  });

  it("names the offline model once (its provider and model are both 'offline')", () => {
    const report: StatusReport = {
      url: "http://127.0.0.1:8787",
      reachable: true,
      version: "0.1.0",
      token: { accepted: true, source: ".dev.vars" },
      worker: {
        version: "0.1.0",
        model: { provider: "offline", model: "offline", detail: "the built-in offline model (canned replies)" },
        platforms: [],
        gateways: [],
        migrations: { expected: 9, applied: 9, missing: [] },
        cron: { last_run: null },
        setting_problems: [],
      },
      problems: [],
    };
    expect(formatStatus(report, 0, plain)).toContain("✓ model      offline: the built-in offline model (canned replies)");
    expect(formatStatus(report, 0, plain)).toContain("✓ settings   all understood");
  });

  it("the cron hint is one that works under wrangler 4 (GET /__scheduled answered 404 under npm run dev)", () => {
    const report = (url: string): StatusReport => ({
      url,
      reachable: true,
      version: "0.1.0",
      token: { accepted: true, source: ".dev.vars" },
      worker: {
        version: "0.1.0",
        model: { provider: "offline", model: "offline", detail: "x" },
        platforms: [],
        gateways: [],
        migrations: { expected: 9, applied: 9, missing: [] },
        cron: { last_run: null },
        setting_problems: [],
      },
      problems: [],
    });
    const local = formatStatus(report("http://127.0.0.1:8787"), 0, plain).join("\n");
    expect(local).toContain("– cron       has not run (wrangler does not run it locally; run it once: curl http://127.0.0.1:8787/cdn-cgi/handler/scheduled)");
    expect(local).not.toContain("__scheduled");
    expect(formatStatus(report("https://he.example.workers.dev"), 0, plain).join("\n")).toContain(
      "– cron       has not run yet (it runs on wrangler.toml's [triggers] schedule)",
    );
  });

  it("with a wrong HERMES_EDGE_TOKEN, status says to fix or unset the variable, not to log in (it overrides the login)", async () => {
    const worker = await serve((req) =>
      new URL(req.url).pathname === "/health"
        ? Response.json({ ok: true, service: "hermes-edge", version: "0.1.0" })
        : Response.json({ error: { code: "unauthorized", message: "bad token" } }, { status: 401 }),
    );
    try {
      const t = memoryIo({ HERMES_EDGE_URL: worker.url, HERMES_EDGE_TOKEN: "wrong" });
      expect(await createCli(["status"], t.io).run()).toBe(1);
      expect(t.out()).toContain("HERMES_EDGE_TOKEN does not match the Worker's API_TOKEN");
      expect(t.out()).toContain(
        "fix: HERMES_EDGE_TOKEN is set and overrides `hermes-edge login` and ./.dev.vars: set it to the Worker's API_TOKEN, or unset it",
      );
      expect(t.out()).not.toMatch(/fix: .*npx hermes-edge login/);
    } finally {
      await worker.close();
    }
  });

  it("shows Discord's Gateway: connected since, last ACK and latency, resumes, last close code; a stopped one points at its fix", () => {
    const now = Date.UTC(2026, 11, 1, 12);
    const base = { last_close_at: now - 3_600_000, problem: null };
    expect(
      connectionText(
        { ...base, state: "connected", connected_since: now - 600_000, last_ack_at: now - 20_000, latency_ms: 42, resumes: 3, last_close_code: 1006 },
        now,
      ),
    ).toBe("connected 10m ago · last ACK 20s ago (42 ms) · 3 resumes · last close 1006 1h ago");
    const fix = { problem: "4014", fix: "turn on Message Content Intent" };
    expect(
      connectionText(
        { ...base, state: "stopped", connected_since: null, last_ack_at: null, latency_ms: null, resumes: 0, last_close_code: 4014, problem: fix },
        now,
      ),
    ).toBe("stopped (close 4014): not retried until fixed, see below");
    expect(
      connectionText({ ...base, state: "connecting", connected_since: null, last_ack_at: null, latency_ms: null, resumes: 0, last_close_code: null }, now),
    ).toBe("connecting");
  });
});

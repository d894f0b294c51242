import path from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayCommand, gatewayRuntimeProblem } from "../../cli/gateway/command.ts";
import { readGatewayConfig } from "../../cli/gateway/config.ts";
import { createCli } from "../../cli/main.ts";
import { memoryIo } from "../support/cli-io.ts";
import { RELAYABLE } from "../../workers/platforms/names.ts";
import { tempDir } from "../support/temp.ts";

const io = (env: Record<string, string | undefined>) => memoryIo(env);

const RELAY = { GATEWAY_RELAY_URL: "https://edge.example.com", GATEWAY_RELAY_ID: "home/nas", GATEWAY_RELAY_SECRET: "s" };

describe("hermes-edge gateway command", () => {
  it("is listed in the main help and has its own --help", async () => {
    const main = io({});
    expect(await createCli(["--help"], main.io).run()).toBe(0);
    expect(main.out()).toMatch(/^ {2}gateway {2,}/m);
    const t = io({});
    expect(await createCli(["gateway", "--help"], t.io).run()).toBe(0);
    expect(t.out()).toContain("Usage: hermes-edge gateway [--platforms telegram,discord,slack] [--bridge signal] [--db <path>]");
  });

  it("on a Node without node:sqlite or WebSocket, says so before anything else (exit code 1)", async () => {
    expect(await gatewayRuntimeProblem()).toBeNull();
    const t = io({});
    await expect(gatewayCommand({}, t.io, async () => "hermes-edge gateway needs Node 22.13 or later")).rejects.toMatchObject({
      exitCode: 1,
      message: "hermes-edge gateway needs Node 22.13 or later",
    });
  });

  it("refuses missing or bad settings in one line with exit code 2", async () => {
    const cases: Array<[Record<string, string>, string[], string]> = [
      [{ GATEWAY_RELAY_URL: "https://x" }, [], "GATEWAY_RELAY_ID, GATEWAY_RELAY_SECRET are not set"],
      [{ ...RELAY, GATEWAY_RELAY_URL: "ftp://x" }, [], "GATEWAY_RELAY_URL: unsupported scheme 'ftp'"],
      [RELAY, ["--platforms", "telegram,irc"], "--platforms: unknown platform 'irc'"],
    ];
    for (const [env, args, message] of cases) {
      const t = io(env);
      expect(await createCli(["gateway", ...args], t.io).run(), message).toBe(2);
      expect(t.err().trim().split("\n"), message).toHaveLength(1);
      expect(t.err()).toContain(message);
    }
  });

  it("reads the relay and model settings, with a per-gateway database under the working directory", () => {
    const cwd = tempDir("he-gw-cli-");
    const r = readGatewayConfig(
      { ...RELAY, LLM_BASE_URL: "http://127.0.0.1:9/v1", OFFLINE_STREAM_DELAY_MS: "0", LLM_TRANSCRIBE_MODEL: "whisper-1", ATTACHMENT_MAX_BYTES: "2048" },
      { platforms: "Slack, telegram,slack" },
      cwd,
    );
    expect(r).toEqual({
      ok: true,
      config: {
        relayUrl: "wss://edge.example.com/relay",
        gatewayId: "home/nas",
        secret: "s",
        platforms: ["slack", "telegram"],
        dbPath: path.join(cwd, ".hermes-edge", "gateway-home_nas.db"),
        model: { baseUrl: "http://127.0.0.1:9/v1", apiKey: undefined, model: undefined, offlineDelayMs: 0 },
        busyPolicy: "queue",
        mcpServers: [],
        context: { systemPrompt: undefined, budget: 32000 },
        attachments: { maxBytes: 2048, transcribe: { baseUrl: "http://127.0.0.1:9/v1", model: "whisper-1" } },
      },
    });
    expect(readGatewayConfig(RELAY, { db: "x/y.db" }, cwd)).toMatchObject({
      ok: true,
      config: { dbPath: path.join(cwd, "x/y.db"), platforms: [...RELAYABLE] },
    });
  });
});

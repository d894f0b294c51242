import path from "node:path";
import { parseContextTokens, resolveProvider } from "../../workers/agent/index.ts";
import { attachmentSettings } from "../../workers/attachments/index.ts";
import type { McpServerEntry } from "../../workers/agent/mcp/index.ts";
import { BRIDGED_ONLY, RELAYABLE, isPlatformName, type PlatformName } from "../../workers/platforms/names.ts";
import type { GatewayConfig } from "./index.ts";
import { readMcpFile } from "./mcp.ts";
import { normaliseRelayUrl } from "./url.ts";

/**
 * A validated gateway configuration with its MCP servers (`--mcp <file>`; empty without
 * the flag). Build their tools with `gatewayMcpSource(config.mcpServers, …)` from ./mcp.ts.
 */
export type GatewaySettings = GatewayConfig;

/** The gateway's settings from the environment and flags, or a one-line reason why not. */
export type ConfigResult = { ok: true; config: GatewaySettings } | { ok: false; error: string };

/** Parses `--platforms` (a comma list); undefined means all the relayable ones. */
export function parsePlatforms(value: string | undefined): PlatformName[] | string {
  if (value === undefined) return [...RELAYABLE];
  const out: PlatformName[] = [];
  for (const raw of value.split(",")) {
    const name = raw.trim().toLowerCase();
    if (name === "") continue;
    if (!isPlatformName(name) || !RELAYABLE.includes(name))
      return `--platforms: unknown platform '${name}' (known: ${RELAYABLE.join(", ")})${isPlatformName(name) ? `; ${name} is bridged: --bridge ${name}` : ""}`;
    if (!out.includes(name)) out.push(name);
  }
  return out.length > 0 ? out : `--platforms: name at least one of ${RELAYABLE.join(", ")}`;
}

/** What `--bridge signal` needs: signal-cli's HTTP daemon and the account it serves. */
export interface SignalBridgeConfig {
  /** `SIGNAL_CLI_URL` without a trailing slash (default http://127.0.0.1:8080). */
  url: string;
  /** `SIGNAL_ACCOUNT`: the bot's number (`+…`). */
  account: string;
}

/** Reads `--bridge` and the SIGNAL_* environment, or why not. */
function readBridge(value: string | undefined, get: (name: string) => string | undefined): { signal?: SignalBridgeConfig } | string {
  if (value === undefined) return {};
  const names = value
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);
  const bad = names.find((n) => !(BRIDGED_ONLY as readonly string[]).includes(n));
  if (bad !== undefined || names.length === 0) return `--bridge: unknown platform '${bad ?? ""}' (a gateway bridges: ${BRIDGED_ONLY.join(", ")})`;
  const account = get("SIGNAL_ACCOUNT");
  if (!account || !/^\+\d{5,20}$/.test(account)) return "SIGNAL_ACCOUNT must be the bot's Signal number (+ and digits), the account signal-cli serves";
  const raw = get("SIGNAL_CLI_URL") ?? "http://127.0.0.1:8080";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `SIGNAL_CLI_URL must be signal-cli's HTTP daemon (http://host:port, as given to daemon --http), not '${raw}'`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return `SIGNAL_CLI_URL must be an http:// URL (got '${raw}')`;
  return { signal: { url: url.toString().replace(/\/+$/, ""), account } };
}

/** `.hermes-edge/gateway-<id>.db` under `cwd`, the id made safe for a file name. */
export function defaultDbPath(cwd: string, gatewayId: string): string {
  return path.join(cwd, ".hermes-edge", `gateway-${gatewayId.replace(/[^A-Za-z0-9._-]/g, "_")}.db`);
}

/** Reads GATEWAY_RELAY_URL/ID/SECRET, LLM_*, BUSY_POLICY, SYSTEM_PROMPT, LLM_CONTEXT_TOKENS and OFFLINE_STREAM_DELAY_MS, and the flags. */
export function readGatewayConfig(
  env: Record<string, string | undefined>,
  flags: { platforms?: string | undefined; bridge?: string | undefined; db?: string | undefined; mcp?: string | undefined },
  cwd: string,
): ConfigResult {
  const get = (name: string) => env[name]?.trim() || undefined;
  const relay = { GATEWAY_RELAY_URL: get("GATEWAY_RELAY_URL"), GATEWAY_RELAY_ID: get("GATEWAY_RELAY_ID"), GATEWAY_RELAY_SECRET: get("GATEWAY_RELAY_SECRET") };
  const { GATEWAY_RELAY_URL: relayUrl, GATEWAY_RELAY_ID: gatewayId, GATEWAY_RELAY_SECRET: secret } = relay;
  if (relayUrl === undefined || gatewayId === undefined || secret === undefined) {
    const missing = Object.entries(relay).flatMap(([name, value]) => (value === undefined ? [name] : []));
    return {
      ok: false,
      error: `${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set (the connector's URL, this gateway's id and its secret from RELAY_SECRETS)`,
    };
  }
  const url = normaliseRelayUrl(relayUrl);
  if (!url.ok) return { ok: false, error: `GATEWAY_RELAY_URL: ${url.error}` };
  const bridge = readBridge(flags.bridge, get);
  if (typeof bridge === "string") return { ok: false, error: bridge };
  // A bridging gateway relays nothing unless --platforms says so.
  const platforms = flags.bridge !== undefined && flags.platforms === undefined ? [] : parsePlatforms(flags.platforms);
  if (typeof platforms === "string") return { ok: false, error: platforms };
  const delay = get("OFFLINE_STREAM_DELAY_MS");
  const offlineDelayMs = delay === undefined ? undefined : Number(delay);
  if (offlineDelayMs !== undefined && !(Number.isFinite(offlineDelayMs) && offlineDelayMs >= 0))
    return { ok: false, error: `OFFLINE_STREAM_DELAY_MS must be a number of milliseconds (got '${delay}')` };
  if (flags.db !== undefined && flags.db.trim() === "") return { ok: false, error: "--db needs a file path" };
  const model = { provider: get("LLM_PROVIDER"), baseUrl: get("LLM_BASE_URL"), apiKey: get("LLM_API_KEY"), model: get("LLM_MODEL"), offlineDelayMs };
  const provider = resolveProvider(model);
  if (!provider.ok) {
    const edgeOnly = model.provider?.toLowerCase() === "workers-ai";
    return {
      ok: false,
      error: edgeOnly
        ? "LLM_PROVIDER=workers-ai runs only in the Worker (it needs the AI binding); the gateway uses LLM_BASE_URL or the offline model"
        : provider.error,
    };
  }
  let mcpServers: McpServerEntry[] = [];
  if (flags.mcp !== undefined) {
    if (flags.mcp.trim() === "") return { ok: false, error: "--mcp needs a file path" };
    const mcp = readMcpFile(flags.mcp, cwd);
    if (!mcp.ok) return { ok: false, error: mcp.error };
    mcpServers = mcp.servers;
  }
  return {
    ok: true,
    config: {
      relayUrl: url.url,
      gatewayId,
      secret,
      platforms,
      ...(bridge.signal ? { bridge } : {}),
      dbPath: flags.db !== undefined ? path.resolve(cwd, flags.db) : defaultDbPath(cwd, gatewayId),
      model,
      busyPolicy: get("BUSY_POLICY") === "interrupt" ? "interrupt" : "queue",
      mcpServers,
      context: { systemPrompt: get("SYSTEM_PROMPT"), budget: parseContextTokens(get("LLM_CONTEXT_TOKENS")) },
      attachments: attachmentSettings({ maxBytes: get("ATTACHMENT_MAX_BYTES"), transcribeModel: get("LLM_TRANSCRIBE_MODEL"), model }),
    },
  };
}

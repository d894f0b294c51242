// MCP tools for the agent: remote servers at the edge (and on the gateway, which adds
// local stdio servers in cli/gateway/mcp.ts). Nothing here starts processes.
import { isSecretKey } from "../tool-summary.ts";
import { isUrlEntry, parseMcpServers, tokenFor, tokenSecretName, type McpUrlEntry } from "./config.ts";
import { DEFAULT_MAX_RESPONSE_BYTES, httpPlans, serverFetch } from "./http.ts";
import { redactor } from "./result.ts";
import { DEFAULT_TOOL_TIMEOUT_MS, McpToolSource, type McpSourceOptions, type ServerSpec } from "./source.ts";
import { RequestTracker } from "./tracker.ts";

export { isUrlEntry, parseMcpServers, tokenFor, tokenSecretName, type McpCommandEntry, type McpServerEntry, type McpUrlEntry } from "./config.ts";
export type { Clock } from "./connection.ts";
export { formatCallResult, redactor } from "./result.ts";
export { TOOL_NAME, namespacedName, sanitiseInputSchema } from "./schema.ts";
export { DEFAULT_TOOL_TIMEOUT_MS, McpToolSource, type McpSourceOptions, type ServerSpec } from "./source.ts";

/** Longest `TOOL_TIMEOUT_MS` accepted (10 minutes). */
const MAX_TOOL_TIMEOUT_MS = 600_000;

/** `TOOL_TIMEOUT_MS`: a whole number of milliseconds, 1 to 600000; otherwise the default and a problem line. */
export function parseToolTimeout(raw: string | undefined): { ms: number; problem?: string } {
  const text = raw?.trim();
  if (!text) return { ms: DEFAULT_TOOL_TIMEOUT_MS };
  const n = Number(text);
  if (Number.isInteger(n) && n > 0 && n <= MAX_TOOL_TIMEOUT_MS) return { ms: n };
  return {
    ms: DEFAULT_TOOL_TIMEOUT_MS,
    problem: `TOOL_TIMEOUT_MS must be 1-${MAX_TOOL_TIMEOUT_MS} milliseconds (got '${text}'); using ${DEFAULT_TOOL_TIMEOUT_MS}`,
  };
}

/** Limits and network of remote servers. */
export interface RemoteOptions {
  token?: string | undefined;
  fetch?: typeof fetch;
  maxResponseBytes?: number;
}

/**
 * How to reach a remote server: Streamable HTTP, then the older HTTP+SSE transport; its
 * bearer token added to requests to its own origin only; every secret of its config (token,
 * secret-looking query values) redacted from what comes back.
 */
export function remoteServer(entry: McpUrlEntry, opts: RemoteOptions = {}): ServerSpec {
  const tracker = new RequestTracker();
  const url = new URL(entry.url);
  const secrets = [opts.token, ...[...url.searchParams].filter(([k]) => isSecretKey(k)).map(([, v]) => v)];
  const fetchImpl = serverFetch(opts.fetch ?? ((input, init) => fetch(input, init)), {
    origin: url.origin,
    token: opts.token,
    tracker,
    maxBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
  });
  return { name: entry.name, plans: httpPlans(entry.url, fetchImpl, tracker), tracker, redact: redactor(secrets), tokenName: tokenSecretName(entry.name) };
}

/** The Worker settings this reads; `MCP_TOKEN_<NAME>` secrets are read by computed name. */
export interface EdgeMcpEnv {
  MCP_SERVERS?: string;
  TOOL_TIMEOUT_MS?: string;
}

/** Options of {@link edgeMcpSource}: the source's limits and hooks, and the network. */
export interface EdgeMcpOptions extends McpSourceOptions, Omit<RemoteOptions, "token"> {}

/**
 * The MCP tool source of one session object, from `MCP_SERVERS` (JSON list of
 * `{"name","url"}`), `MCP_TOKEN_<NAME>` and `TOOL_TIMEOUT_MS`; null when `MCP_SERVERS` is
 * unset or empty. The Worker passes `settings(env).mcp` (the catalog's values). A bad config
 * never throws: its problems become notes for the model and log lines, and the good entries
 * are used.
 */
export function edgeMcpSource(config: EdgeMcpEnv, opts: EdgeMcpOptions = {}): McpToolSource | null {
  const parsed = parseMcpServers(config.MCP_SERVERS, { source: "MCP_SERVERS", commands: false });
  if (parsed.servers.length === 0 && parsed.problems.length === 0) return null;
  const timeout = parseToolTimeout(config.TOOL_TIMEOUT_MS);
  const problems = timeout.problem ? [...parsed.problems, timeout.problem] : parsed.problems;
  const specs = parsed.servers.filter(isUrlEntry).map((entry) => remoteServer(entry, { ...opts, token: tokenFor(config, entry.name) }));
  return new McpToolSource(specs, problems, { callTimeoutMs: timeout.ms, ...opts });
}

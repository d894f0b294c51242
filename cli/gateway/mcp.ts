import { readFileSync } from "node:fs";
import path from "node:path";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { isSecretKey } from "../../workers/agent/tool-summary.ts";
import {
  McpToolSource,
  isUrlEntry,
  parseMcpServers,
  parseToolTimeout,
  redactor,
  remoteServer,
  tokenFor,
  type Clock,
  type McpCommandEntry,
  type McpServerEntry,
  type ServerSpec,
} from "../../workers/agent/mcp/index.ts";

/** How much of a child's stderr is kept for the log when it fails. */
const STDERR_KEPT_CHARS = 4_000;

/**
 * Reads the `--mcp <file>` list (the MCP_SERVERS format; entries may also be
 * `{"name","command","args"?,"env"?}`). Unlike the Worker, which skips bad entries, the
 * gateway refuses to start on any problem, listing them all.
 */
export function readMcpFile(file: string, cwd: string): { ok: true; servers: McpServerEntry[]; path: string } | { ok: false; error: string } {
  const full = path.resolve(cwd, file);
  let text: string;
  try {
    text = readFileSync(full, "utf8");
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { ok: false, error: `--mcp: cannot read ${full}${code === "ENOENT" ? " (no such file)" : code ? ` (${code})` : ""}` };
  }
  const parsed = parseMcpServers(text, { source: path.basename(full), commands: true });
  if (parsed.problems.length > 0) return { ok: false, error: `--mcp ${full}:\n  ${parsed.problems.join("\n  ")}` };
  if (parsed.servers.length === 0) return { ok: false, error: `--mcp ${full}: the list names no servers` };
  return { ok: true, servers: parsed.servers, path: full };
}

/** Options of {@link gatewayMcpSource}. */
export interface GatewayMcpOptions {
  /** The gateway's environment: `MCP_TOKEN_<NAME>` for remote servers, `TOOL_TIMEOUT_MS`. */
  env: Record<string, string | undefined>;
  /** The gateway's log (the status line's); failures and a failed child's stderr go here. */
  log: (line: string) => void;
  /** Working directory of the child processes. */
  cwd?: string;
  fetch?: typeof fetch;
  clock?: Clock;
}

/**
 * A local server: the SDK's stdio transport starts `command` with `args` and `env` (on top
 * of the SDK's small safe environment: HOME, PATH, …). Its stderr is kept, not printed:
 * the last few thousand characters go to the log only when the server fails.
 */
function commandServer(entry: McpCommandEntry, cwd: string | undefined): ServerSpec {
  let stderr = "";
  const secrets = Object.entries(entry.env)
    .filter(([k]) => isSecretKey(k))
    .map(([, v]) => v);
  return {
    name: entry.name,
    redact: redactor(secrets),
    plans: [
      {
        create: () => {
          stderr = "";
          const t = new StdioClientTransport({ command: entry.command, args: entry.args, env: entry.env, stderr: "pipe", ...(cwd ? { cwd } : {}) });
          t.stderr?.on("data", (chunk: Buffer) => void (stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEPT_CHARS)));
          return t;
        },
      },
    ],
    diagnostics: () => (stderr.trim() ? `stderr of ${entry.name}:\n${stderr.trimEnd()}` : ""),
  };
}

/**
 * The gateway's MCP tool source: local servers (child processes) and remote ones from the
 * `--mcp` file, shared by all sessions. Call `close()` at shutdown: it stops the children
 * (stdin closed, then SIGTERM, then SIGKILL).
 */
export function gatewayMcpSource(servers: readonly McpServerEntry[], opts: GatewayMcpOptions): McpToolSource {
  const timeout = parseToolTimeout(opts.env.TOOL_TIMEOUT_MS);
  const specs = servers.map((entry) =>
    isUrlEntry(entry)
      ? remoteServer(entry, { token: tokenFor(opts.env, entry.name), ...(opts.fetch ? { fetch: opts.fetch } : {}) })
      : commandServer(entry, opts.cwd),
  );
  return new McpToolSource(specs, timeout.problem ? [timeout.problem] : [], {
    callTimeoutMs: timeout.ms,
    log: opts.log,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
}

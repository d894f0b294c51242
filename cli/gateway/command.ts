import { parseArgs } from "node:util";
import { CliError } from "../client.ts";
import type { CliIo } from "../io.ts";
import { readGatewayConfig } from "./config.ts";

export const GATEWAY_USAGE = `Usage: hermes-edge gateway [--platforms telegram,discord,slack] [--db <path>] [--mcp <file>]

Runs a relay gateway: dials out to a hermes-edge Worker's /relay WebSocket (no public
address needed), receives the platform messages relayed to this gateway, answers them
with the agent, and sends the replies back through the Worker. Stops on Ctrl-C/SIGTERM.

Options:
  --platforms <list>   platforms to front, comma separated (default: all three)
  --db <path>          local transcripts and replay dedupe (default
                       .hermes-edge/gateway-<id>.db in the current directory)
  --mcp <file>         MCP servers whose tools the agent may use: a JSON list of
                       {"name","command","args"?,"env"?} (local, started here) or
                       {"name","url"} (remote; token from MCP_TOKEN_<NAME>)
  -h, --help           this help

Environment:
  GATEWAY_RELAY_URL      the Worker (https://… or wss://…; /relay is appended)
  GATEWAY_RELAY_ID       this gateway's id in the Worker's RELAY_SECRETS
  GATEWAY_RELAY_SECRET   its secret there
  LLM_BASE_URL, LLM_API_KEY, LLM_MODEL   the model (unset LLM_BASE_URL: offline model)
  LLM_PROVIDER                           openai or offline (workers-ai is edge-only)
  MCP_TOKEN_<NAME>, TOOL_TIMEOUT_MS      remote MCP servers' tokens; tool call limit (ms)
  OFFLINE_STREAM_DELAY_MS                offline model: pause between words`;

let sqliteWarningQuiet = false;

/**
 * node:sqlite prints an ExperimentalWarning when loaded. Node's default printer is a
 * `warning` listener; it is replaced by one that passes every other warning on to it.
 */
function quietSqliteWarning(): void {
  if (sqliteWarningQuiet) return;
  sqliteWarningQuiet = true;
  const printers = process.listeners("warning");
  process.removeAllListeners("warning");
  process.on("warning", (w) => {
    if (w.name === "ExperimentalWarning" && /SQLite/i.test(w.message)) return;
    for (const print of printers) print(w);
  });
}

/** `hermes-edge gateway …`: parses flags and settings, then runs the gateway; the exit code. */
export async function gatewayCommand(args: string[], io: CliIo): Promise<number> {
  let values: { platforms?: string | undefined; db?: string | undefined; mcp?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({ args, options: { platforms: { type: "string" }, db: { type: "string" }, mcp: { type: "string" }, help: { type: "boolean", short: "h" } }, allowPositionals: false, strict: true }));
  } catch (err) {
    throw new CliError(`${err instanceof Error ? err.message : String(err)}\n\n${GATEWAY_USAGE}`, 2);
  }
  if (values.help) return io.stdout.write(`${GATEWAY_USAGE}\n`), 0;
  const cfg = readGatewayConfig(io.env, values, io.cwd);
  if (!cfg.ok) throw new CliError(cfg.error, 2);
  quietSqliteWarning();
  // Loaded only now, so other commands never load node:sqlite (and its warning).
  const { runGateway } = await import("./index.ts");
  return runGateway(cfg.config, { io });
}

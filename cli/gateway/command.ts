import { parseArgs } from "node:util";
import { CliError } from "../client.ts";
import type { CliIo } from "../io.ts";
import { readGatewayConfig } from "./config.ts";

export const GATEWAY_USAGE = `Usage: hermes-edge gateway [--platforms telegram,discord,slack] [--db <path>]

Runs a relay gateway: dials out to a hermes-edge Worker's /relay WebSocket (no public
address needed), receives the platform messages relayed to this gateway, answers them
with the agent, and sends the replies back through the Worker. Stops on Ctrl-C/SIGTERM.

Options:
  --platforms <list>   platforms to front, comma separated (default: all three)
  --db <path>          local transcripts and replay dedupe (default
                       .hermes-edge/gateway-<id>.db in the current directory)
  -h, --help           this help

Environment:
  GATEWAY_RELAY_URL      the Worker (https://… or wss://…; /relay is appended)
  GATEWAY_RELAY_ID       this gateway's id in the Worker's RELAY_SECRETS
  GATEWAY_RELAY_SECRET   its secret there
  LLM_BASE_URL, LLM_API_KEY, LLM_MODEL   the model (unset LLM_BASE_URL: offline model)
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

/**
 * Why this Node cannot run the gateway (node:sqlite, unflagged from Node 22.13, and the
 * global WebSocket), or null when it can. The other commands run on Node 20.
 */
export async function gatewayRuntimeProblem(): Promise<string | null> {
  const missing: string[] = [];
  try {
    await import("node:sqlite");
  } catch {
    missing.push("node:sqlite");
  }
  if (typeof globalThis.WebSocket !== "function") missing.push("WebSocket");
  if (missing.length === 0) return null;
  return `hermes-edge gateway needs Node 22.13 or later (for ${missing.join(" and ")}); this is Node ${process.version}. The other commands work on it.`;
}

/** `hermes-edge gateway …`: parses flags and settings, then runs the gateway; the exit code. */
export async function gatewayCommand(args: string[], io: CliIo, runtimeProblem: () => Promise<string | null> = gatewayRuntimeProblem): Promise<number> {
  let values: { platforms?: string | undefined; db?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({ args, options: { platforms: { type: "string" }, db: { type: "string" }, help: { type: "boolean", short: "h" } }, allowPositionals: false, strict: true }));
  } catch (err) {
    throw new CliError(`${err instanceof Error ? err.message : String(err)}\n\n${GATEWAY_USAGE}`, 2);
  }
  if (values.help) return io.stdout.write(`${GATEWAY_USAGE}\n`), 0;
  quietSqliteWarning();
  const problem = await runtimeProblem();
  if (problem) throw new CliError(problem);
  const cfg = readGatewayConfig(io.env, values, io.cwd);
  if (!cfg.ok) throw new CliError(cfg.error, 2);
  // Loaded only now, so other commands never load node:sqlite (and its warning).
  const { runGateway } = await import("./index.ts");
  return runGateway(cfg.config, { io });
}

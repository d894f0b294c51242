import { CliError } from "../client.ts";
import type { CliIo } from "../io.ts";
import { readGatewayConfig } from "./config.ts";

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

/** `hermes-edge gateway`, its flags parsed (cli/commands.ts): checks the Node and the settings, then runs the gateway; the exit code. */
export async function gatewayCommand(
  flags: { platforms?: string | undefined; bridge?: string | undefined; db?: string | undefined; mcp?: string | undefined },
  io: CliIo,
  runtimeProblem: () => Promise<string | null> = gatewayRuntimeProblem,
): Promise<number> {
  quietSqliteWarning();
  const problem = await runtimeProblem();
  if (problem) throw new CliError(problem);
  const cfg = readGatewayConfig(io.env, flags, io.cwd);
  if (!cfg.ok) throw new CliError(cfg.error, 2);
  // Loaded only now, so other commands never load node:sqlite (and its warning).
  const { runGateway } = await import("./index.ts");
  return runGateway(cfg.config, { io });
}

import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { applyLocalMigrations, PROJECT_ROOT, wranglerEnv } from "../../cli/local.ts";
import { freePort } from "./http.ts";

/** Every Worker setting, blank: a test names the ones it wants, nothing comes from .dev.vars. */
export const BLANK_VARS: Record<string, string> = Object.fromEntries(
  [
    "API_TOKEN", "LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL", "BUSY_POLICY", "OFFLINE_STREAM_DELAY_MS",
    "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_HOME_CHANNEL", "TELEGRAM_HOME_CHANNEL_THREAD_ID", "TELEGRAM_ALLOWED_USERS", "TELEGRAM_ADMIN_USERS", "TELEGRAM_API_ROOT",
    "DISCORD_APPLICATION_ID", "DISCORD_PUBLIC_KEY", "DISCORD_BOT_TOKEN", "DISCORD_HOME_CHANNEL", "DISCORD_ALLOWED_USERS", "DISCORD_ADMIN_USERS", "DISCORD_API_BASE",
    "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_HOME_CHANNEL", "SLACK_ALLOWED_USERS", "SLACK_ADMIN_USERS", "SLACK_API_URL",
    "RELAY_PLATFORMS", "RELAY_SECRETS", "RELAY_BUFFER_LIMIT", "ATTACHMENT_MAX_BYTES", "LLM_TRANSCRIBE_MODEL",
  ].map((k) => [k, ""]),
);

/** A real `wrangler dev` on loopback, with its own throwaway local D1. */
export interface DevWorker {
  url: string;
  token: string;
  /** Everything wrangler printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
  /** Kills it at once (for process exit, where nothing can be awaited). */
  kill(): void;
}

export async function startWorker(vars: Record<string, string>, opts: { token?: string } = {}): Promise<DevWorker> {
  const token = opts.token ?? "e2e-token";
  const persist = mkdtempSync(path.join(tmpdir(), "hermes-edge-e2e-"));
  const env = { ...process.env };
  await applyLocalMigrations(PROJECT_ROOT, env, ["--persist-to", persist]);
  const [port, inspector] = [await freePort(), await freePort()];
  const all = { ...BLANK_VARS, API_TOKEN: token, ...vars };
  const args = [
    path.join(PROJECT_ROOT, "node_modules", "wrangler", "bin", "wrangler.js"),
    "dev",
    "--port", String(port),
    "--ip", "127.0.0.1",
    "--inspector-port", String(inspector),
    "--persist-to", persist,
    "--env-file", "/dev/null",
    "--show-interactive-dev-session=false",
    ...Object.entries(all).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env: wranglerEnv(env), stdio: ["ignore", "pipe", "pipe"], detached: true });
  // Recorded for the e2e global teardown, which stops it even if this process dies first.
  if (process.env.HERMES_E2E_PIDFILE && child.pid !== undefined) appendFileSync(process.env.HERMES_E2E_PIDFILE, `${child.pid}\n`);
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const exited = new Promise((r) => child.once("exit", r));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // gone already
      }
      await exited;
    }
    rmSync(persist, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${output}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not become healthy:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const kill = () => {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    rmSync(persist, { recursive: true, force: true });
  };
  return { url, token, output: () => output, stop, kill };
}

import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { applyLocalMigrations, PROJECT_ROOT, wranglerEnv } from "../../cli/local.ts";
import { freePort } from "./http.ts";

/** Every Worker setting, blank: a test names the ones it wants, nothing comes from .dev.vars. */
export const BLANK_VARS: Record<string, string> = Object.fromEntries(
  [
    "API_TOKEN", "LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL", "BUSY_POLICY", "SYSTEM_PROMPT", "LLM_CONTEXT_TOKENS", "DAILY_TOKEN_BUDGET", "RETENTION_DAYS", "OFFLINE_STREAM_DELAY_MS",
    "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_HOME_CHANNEL", "TELEGRAM_HOME_CHANNEL_THREAD_ID", "TELEGRAM_ALLOWED_USERS", "TELEGRAM_ADMIN_USERS", "TELEGRAM_API_ROOT",
    "DISCORD_APPLICATION_ID", "DISCORD_PUBLIC_KEY", "DISCORD_BOT_TOKEN", "DISCORD_HOME_CHANNEL", "DISCORD_ALLOWED_USERS", "DISCORD_ADMIN_USERS", "DISCORD_API_BASE",
    "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_HOME_CHANNEL", "SLACK_ALLOWED_USERS", "SLACK_ADMIN_USERS", "SLACK_API_URL",
    "RELAY_PLATFORMS", "RELAY_SECRETS", "RELAY_BUFFER_LIMIT",
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

/**
 * A `wrangler dev` that can be crashed and brought back on the same port and storage
 * (`--persist-to`): D1, Durable Object storage and alarms outlive a kill -9, as they
 * outlive a machine dying under a deployed Worker.
 */
export interface RestartableWorker extends DevWorker {
  /** kill -9 of wrangler and its workerd (their process group); resolves once they are gone. */
  crash(): Promise<void>;
  /** Starts wrangler dev again on the same port and storage; resolves once /health answers. */
  restart(): Promise<void>;
  /** wrangler is up (not crashed or stopped). */
  readonly alive: boolean;
}

/** How long wrangler dev may take to answer /health. */
const START_LIMIT_MS = 60_000;
/** How long wrangler dev may take to stop on SIGTERM before it is killed. */
const STOP_LIMIT_MS = 10_000;

function sigkillGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // gone already
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once("exit", () => r()));
}

/** One wrangler dev process (group) on `port`, healthy when this resolves. */
async function launch(all: Record<string, string>, persist: string, port: number, log: (s: string) => void): Promise<ChildProcess> {
  const inspector = await freePort();
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
  const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env: wranglerEnv({ ...process.env }), stdio: ["ignore", "pipe", "pipe"], detached: true });
  // Recorded for the e2e global teardown, which stops it even if this process dies first.
  if (process.env.HERMES_E2E_PIDFILE && child.pid !== undefined) appendFileSync(process.env.HERMES_E2E_PIDFILE, `${child.pid}\n`);
  child.stdout!.on("data", (d: Buffer) => log(d.toString()));
  child.stderr!.on("data", (d: Buffer) => log(d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_LIMIT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error("wrangler dev exited early");
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      sigkillGroup(child);
      await exited(child);
      throw new Error("wrangler dev did not become healthy");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts a restartable Worker with `vars` (over blank settings) and fresh local storage. */
export async function startRestartableWorker(vars: Record<string, string>, opts: { token?: string } = {}): Promise<RestartableWorker> {
  const token = opts.token ?? "e2e-token";
  const persist = mkdtempSync(path.join(tmpdir(), "hermes-edge-e2e-"));
  await applyLocalMigrations(PROJECT_ROOT, { ...process.env }, ["--persist-to", persist]);
  const port = await freePort();
  const all = { ...BLANK_VARS, API_TOKEN: token, ...vars };
  let output = "";
  const log = (s: string) => (output += s);
  let child: ChildProcess | null = null;
  const start = async () => {
    try {
      child = await launch(all, persist, port, log);
    } catch (err) {
      throw new Error(`${err instanceof Error ? err.message : String(err)}:\n${output}`);
    }
  };
  const crash = async () => {
    const c = child;
    child = null;
    if (!c) return;
    sigkillGroup(c);
    await exited(c);
  };
  await start().catch((err: unknown) => {
    rmSync(persist, { recursive: true, force: true });
    throw err;
  });
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    output: () => output,
    get alive() {
      return child !== null;
    },
    crash,
    async restart() {
      if (child) throw new Error("restart() of a running Worker: crash() it first");
      await start();
    },
    async stop() {
      const c = child;
      child = null;
      if (c && c.pid !== undefined && c.exitCode === null && c.signalCode === null) {
        const gone = exited(c);
        try {
          process.kill(-c.pid, "SIGTERM");
        } catch {
          // gone already
        }
        // A wrangler that ignores SIGTERM is killed after a while: stopping always ends.
        const timer = setTimeout(() => sigkillGroup(c), STOP_LIMIT_MS);
        await gone;
        clearTimeout(timer);
      }
      rmSync(persist, { recursive: true, force: true });
    },
    kill() {
      if (child) sigkillGroup(child);
      child = null;
      rmSync(persist, { recursive: true, force: true });
    },
  };
}

/** A real `wrangler dev` on loopback, with its own throwaway local D1. */
export async function startWorker(vars: Record<string, string>, opts: { token?: string } = {}): Promise<DevWorker> {
  const w = await startRestartableWorker(vars, opts);
  return { url: w.url, token: w.token, output: w.output, stop: w.stop, kill: w.kill };
}

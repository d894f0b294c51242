import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Chat } from "./chat.ts";
import { ApiClient, CliError, readDevVar, type Target } from "./client.ts";
import { println, type CliIo, type Style } from "./io.ts";
import { writeLocalDevConfig } from "./local-config.ts";
import { cronHint } from "./status.ts";

/**
 * The project root: where wrangler.toml and .dev.vars live (one up from cli/, or from dist/
 * in the bundle). From import.meta.url: import.meta.dirname is Node 20.11+ only.
 */
export const PROJECT_ROOT = path.resolve(fileURLToPath(new URL("..", import.meta.url)));

export interface LocalOptions {
  io: CliIo;
  style: Style;
  port?: string | undefined;
  root?: string;
}

/**
 * Makes sure `.dev.vars` holds an API_TOKEN, generating a random one on first run.
 * Returns the token and whether it was just written.
 */
export function ensureDevToken(root: string): { token: string; created: boolean } {
  const file = path.join(root, ".dev.vars");
  const existing = readDevVar(file, "API_TOKEN");
  if (existing) return { token: existing, created: false };
  const token = randomBytes(24).toString("base64url");
  const line = `API_TOKEN=${token}\n`;
  if (existsSync(file)) {
    const text = readFileSync(file, "utf8");
    // An empty `API_TOKEN=` (as in .dev.vars.example) is filled in where it stands.
    const blank = /^[ \t]*API_TOKEN[ \t]*=[ \t]*(["']?)\1[ \t]*$/m;
    if (blank.test(text)) writeFileSync(file, text.replace(blank, `API_TOKEN=${token}`));
    else appendFileSync(file, `${text.endsWith("\n") || text === "" ? "" : "\n"}${line}`);
  } else {
    writeFileSync(file, `# Local secrets for wrangler dev (git-ignored). See README.md, "Configuration".\n${line}`, { mode: 0o600 });
  }
  return { token, created: true };
}

function wranglerEntry(root: string): string {
  if (!existsSync(path.join(root, "wrangler.toml"))) {
    throw new CliError(
      "`hermes-edge start` and `dev` run the Worker from a hermes-edge checkout, and this installation is not one: clone the repository, then `npm install && npm start`",
    );
  }
  const entry = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
  if (!existsSync(entry)) throw new CliError("wrangler is not installed here; run `npm install` first");
  return entry;
}

/** Environment for wrangler child processes: no telemetry, nothing interactive. */
export function wranglerEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return { ...env, WRANGLER_SEND_METRICS: "false", CI: env.CI ?? "1" } as NodeJS.ProcessEnv;
}

/** Runs `wrangler <args>` to completion, returning its exit code and combined output. */
export function runWrangler(root: string, args: string[], env: Record<string, string | undefined>): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [wranglerEntry(root), ...args], { cwd: root, env: wranglerEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

export async function applyLocalMigrations(root: string, env: Record<string, string | undefined>, extra: string[] = []): Promise<void> {
  const { code, output } = await runWrangler(root, ["d1", "migrations", "apply", "DB", "--local", ...extra], env);
  if (code !== 0) throw new CliError(`applying local D1 migrations failed:\n${output.trim().split("\n").slice(-15).join("\n")}`);
}

function parsePort(port: string | undefined): number {
  if (port === undefined) return 8787;
  const n = Number(port);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new CliError(`--port must be a port number, not '${port}'`, 2);
  return n;
}

async function healthy(url: string, fetchImpl: typeof fetch): Promise<boolean> {
  try {
    const res = await fetchImpl(`${url}/health`, { signal: AbortSignal.timeout(1000) });
    return res.ok;
  } catch {
    return false;
  }
}

/** Stops a detached wrangler and everything it started. */
function stopTree(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const pid = child.pid;
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-pid, sig);
      } catch {
        // already gone
      }
    };
    const force = setTimeout(() => kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    kill("SIGTERM");
  });
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/**
 * The web console's address with a local sign-in link: the token rides in the fragment,
 * which the browser never sends, and the page takes it out of the address bar at once.
 * Only for loopback Workers, whose token is the generated one in .dev.vars.
 */
export function consoleLink(url: string, token: string | undefined): string {
  return token ? `${url}/#token=${encodeURIComponent(token)}` : `${url}/`;
}

/** What `npm run dev` prints once the Worker is ready: the console's sign-in link, the chat, the cron. */
export function devNextSteps(url: string, token: string | undefined, style: Style): string[] {
  const port = new URL(url).port;
  return [
    "",
    style.bold(`hermes-edge is ready on ${url}`),
    `  web console: ${consoleLink(url, token)}`,
    `  chat:        npx hermes-edge chat${port === "8787" ? "" : ` (with HERMES_EDGE_URL=${url})`}`,
    `  run the cron once: ${cronHint(url)}`,
  ];
}

/** Calls `show` once, after the chunk of wrangler's output that says it is ready. */
export function showWhenReady(show: () => void): (chunk: Buffer | string) => void {
  let seen = "";
  let done = false;
  return (chunk) => {
    if (done) return;
    // Kept short: the words may be split across chunks, and wrangler colours them.
    seen = (seen + String(chunk).replace(/\x1b\[[0-9;]*m/g, "")).slice(-200);
    if (!/Ready on https?:\/\//.test(seen)) return;
    done = true;
    show();
  };
}

/** `npm start` (Worker + chat) and `npm run dev` (Worker alone). */
export async function runLocal(mode: "start" | "dev", opts: LocalOptions): Promise<number> {
  const { io, style } = opts;
  const root = opts.root ?? PROJECT_ROOT;
  const port = parsePort(opts.port ?? io.env.PORT);
  const say = (s: string) => println(io.stderr, style.dim(s));

  const entry = wranglerEntry(root);
  const { created } = ensureDevToken(root);
  if (created) say("generated a local API_TOKEN in .dev.vars");
  say("applying local D1 migrations…");
  await applyLocalMigrations(root, io.env);

  const devArgs = [entry, "dev", "--config", writeLocalDevConfig(root), "--port", String(port), "--ip", "127.0.0.1"];
  const url = `http://127.0.0.1:${port}`;
  const token = readDevVar(path.join(root, ".dev.vars"), "API_TOKEN") ?? undefined;
  if (mode === "dev") {
    const child = spawn(process.execPath, devArgs, { cwd: root, env: wranglerEnv({ ...io.env, CI: undefined }), stdio: ["inherit", "pipe", "pipe"] });
    // wrangler's output passes through; once it says ready, what to do next comes last.
    const shown = showWhenReady(() => devNextSteps(url, token, style).forEach((l) => println(io.stderr, l)));
    // stdio is "pipe" for both: spawn gives the streams.
    child.stdout?.on("data", (d: Buffer) => (io.stdout.write(d), shown(d)));
    child.stderr?.on("data", (d: Buffer) => (io.stderr.write(d), shown(d)));
    return new Promise((resolve) => child.on("close", (code) => resolve(code ?? 0)));
  }

  if (await healthy(url, io.fetch)) {
    throw new CliError(`something is already serving on port ${port}; stop it, or use --port`);
  }
  mkdirSync(path.join(root, ".wrangler"), { recursive: true });
  const logFile = path.join(root, ".wrangler", "hermes-edge-dev.log");
  const log = openSync(logFile, "w");
  const child = spawn(process.execPath, devArgs, { cwd: root, env: wranglerEnv(io.env), stdio: ["ignore", log, log], detached: true });
  const onExit = () => {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  };
  process.once("exit", onExit);
  // wrangler runs in its own process group (so a terminal Ctrl-C reaches the chat, not it),
  // which means a signal that ends this process must take wrangler down explicitly.
  // SIGINT belongs to the chat once it runs; until then it stops the start.
  let chatting = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (sig === "SIGINT" && chatting) return;
    void stopTree(child).then(() => process.exit(sig === "SIGINT" ? 130 : 143));
  };
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const sig of signals) io.signals.on(sig, onSignal);
  try {
    say(`starting the local Worker on ${url} (log: .wrangler/hermes-edge-dev.log)…`);
    const deadline = io.now() + 60_000;
    let exited = false;
    child.once("exit", () => (exited = true));
    while (!(await healthy(url, io.fetch))) {
      if (exited) throw new CliError(`the local Worker stopped before it was ready:\n${tail(logFile, 20)}`);
      if (io.now() > deadline) throw new CliError(`the local Worker did not answer on ${url} within 60 s:\n${tail(logFile, 20)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    say("ready. Ctrl-C at the prompt or /quit leaves and stops the Worker.");
    say(`web console: ${consoleLink(url, token)} (open it in a browser while the chat runs)`);
    const target: Target = { baseUrl: url, token, tokenSource: token ? ".dev.vars" : "none" };
    chatting = true;
    return await new Chat({ client: new ApiClient(target, io.fetch), io, style }).run();
  } finally {
    for (const sig of signals) io.signals.off(sig, onSignal);
    await stopTree(child);
    process.off("exit", onExit);
  }
}

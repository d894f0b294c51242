import { spawn, type ChildProcess } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { PROJECT_ROOT, wranglerEnv } from "../../cli/local.ts";
import { freePort } from "./http.ts";

/**
 * Every Worker setting, blank: a test names the ones it wants, nothing comes from
 * .dev.vars. The names are read from wrangler.toml's [vars] and .dev.vars.example's
 * secrets, so a new setting is blanked too.
 */
export const BLANK_VARS: Record<string, string> = Object.fromEntries(settingNames().map((k) => [k, ""]));

function settingNames(): string[] {
  const toml = readFileSync(path.join(PROJECT_ROOT, "wrangler.toml"), "utf8");
  const vars = /^\[vars\]\n([\s\S]*?)(?=^\[)/m.exec(toml)?.[1] ?? "";
  const fromVars = [...vars.matchAll(/^([A-Z][A-Z0-9_]*)\s*=/gm)].map((m) => m[1]!);
  const example = readFileSync(path.join(PROJECT_ROOT, ".dev.vars.example"), "utf8");
  const fromSecrets = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!).filter((k) => !k.includes("<"));
  return [...new Set([...fromVars, ...fromSecrets])];
}

/** A real `wrangler dev` on loopback, with its own throwaway local D1. */
export interface DevWorker {
  url: string;
  token: string;
  /** The inspector (Chrome DevTools protocol) port of its workerd, for profiling. */
  inspectorPort: number;
  /** Its process group (wrangler and its workerd), for CPU accounting; null once stopped. */
  readonly processGroup: number | null;
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

/** How a Worker is started: another wrangler config than the project's (the benchmarks' wrapper entry), and who learns how to kill it as soon as it runs. */
export interface StartOptions {
  token?: string;
  config?: string;
  onSpawn?: (kill: () => void) => void;
}

/** One wrangler dev process (group) on `port`, healthy when this resolves. */
async function launch(
  all: Record<string, string>,
  persist: string,
  port: number,
  inspector: number,
  opts: StartOptions,
  log: (s: string) => void,
): Promise<ChildProcess> {
  const args = [
    path.join(PROJECT_ROOT, "node_modules", "wrangler", "bin", "wrangler.js"),
    "dev",
    ...(opts.config ? ["--config", opts.config] : []),
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--inspector-port",
    String(inspector),
    "--persist-to",
    persist,
    "--env-file",
    "/dev/null",
    "--show-interactive-dev-session=false",
    ...Object.entries(all).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  // Its temporary files (miniflare's, workerd's) go under the persist directory, removed with it
  // when the Worker is stopped: a wrangler killed with SIGKILL cannot remove its own.
  const tmp = path.join(persist, "tmp");
  mkdirSync(tmp, { recursive: true });
  const child = spawn(process.execPath, args, {
    cwd: PROJECT_ROOT,
    env: wranglerEnv({ ...process.env, TMPDIR: tmp }),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  // Recorded for the test run's global teardown (test/support/run-dir.ts), which stops it even if this process dies first.
  if (process.env.HERMES_E2E_PIDFILE && child.pid !== undefined) appendFileSync(process.env.HERMES_E2E_PIDFILE, `${child.pid}\n`);
  child.stdout!.on("data", (d: Buffer) => log(d.toString()));
  child.stderr!.on("data", (d: Buffer) => log(d.toString()));
  // Known from now on: a benchmark interrupted while this starts still kills it.
  opts.onSpawn?.(() => sigkillGroup(child));
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

/**
 * The id workerd gives the Durable Object `idFromName(name)` in a namespace with this unique
 * key (src/workerd/server/actor-id-impl.c++): the key is SHA-256 of the unique key, the first
 * 16 bytes are HMAC-SHA256(key, name), the last 16 HMAC-SHA256(key, those 16 bytes).
 */
function objectIdFromName(uniqueKey: string, name: string): string {
  const key = createHash("sha256").update(uniqueKey).digest();
  const first = createHmac("sha256", key).update(name).digest().subarray(0, 16);
  const second = createHmac("sha256", key).update(first).digest().subarray(0, 16);
  return Buffer.concat([first, second]).toString("hex");
}

/** The D1 binding's name in wrangler.toml: with no database_id, `wrangler dev` keys its local database on it. */
function d1Binding(): string {
  const toml = readFileSync(path.join(PROJECT_ROOT, "wrangler.toml"), "utf8");
  const binding = /^\[\[d1_databases\]\]\n(?:[^[].*\n)*?binding\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  if (!binding) throw new Error("wrangler.toml has no [[d1_databases]] binding");
  return binding;
}

/**
 * Writes the local D1 database `wrangler dev --persist-to dir` opens, with every migration
 * applied and recorded in `d1_migrations` as `wrangler d1 migrations apply --local` does:
 * miniflare keeps it in `v3/d1/miniflare-D1DatabaseObject/<object id>.sqlite`, a plain
 * SQLite file. node:sqlite does it in milliseconds; the wrangler command cost a process
 * of about 5 s of CPU and 7 s before the first e2e Worker could start. (If the path ever
 * changes, the Worker starts on an empty database and every e2e test fails on a missing
 * table; `hermes-edge status` in cli-data.e2e.ts checks the recorded migrations.)
 */
export function writeMigratedD1(persist: string): void {
  const dir = path.join(persist, "v3", "d1", "miniflare-D1DatabaseObject");
  mkdirSync(dir, { recursive: true });
  const db = new DatabaseSync(path.join(dir, `${objectIdFromName("miniflare-D1DatabaseObject", d1Binding())}.sqlite`));
  try {
    // wrangler's own table (its getCreateMigrationsTableQuery), so `migrations apply` and the Worker's status read it as theirs.
    db.exec(`CREATE TABLE IF NOT EXISTS "d1_migrations"(
\t\tid         INTEGER PRIMARY KEY AUTOINCREMENT,
\t\tname       TEXT UNIQUE,
\t\tapplied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);`);
    const migrations = path.join(PROJECT_ROOT, "migrations");
    const record = db.prepare(`INSERT INTO "d1_migrations" (name) VALUES (?)`);
    const names = readdirSync(migrations).filter((f) => f.endsWith(".sql"));
    for (const name of names.sort()) {
      db.exec("BEGIN");
      db.exec(readFileSync(path.join(migrations, name), "utf8"));
      record.run(name);
      db.exec("COMMIT");
    }
  } finally {
    db.close();
  }
}

/** Starts a restartable Worker with `vars` (over blank settings) and fresh local storage. */
export async function startRestartableWorker(vars: Record<string, string>, opts: StartOptions = {}): Promise<RestartableWorker> {
  const token = opts.token ?? "e2e-token";
  const persist = mkdtempSync(path.join(tmpdir(), "hermes-edge-e2e-"));
  writeMigratedD1(persist);
  const [port, inspector] = [await freePort(), await freePort()];
  const all = { ...BLANK_VARS, API_TOKEN: token, ...vars };
  let output = "";
  const log = (s: string) => (output += s);
  let child: ChildProcess | null = null;
  const start = async () => {
    try {
      child = await launch(all, persist, port, inspector, opts, log);
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
    inspectorPort: inspector,
    get processGroup() {
      return child?.pid ?? null;
    },
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

/** A real `wrangler dev` on loopback, with its own throwaway local D1 (every other setting blank). */
export async function startWorker(vars: Record<string, string>, opts: StartOptions = {}): Promise<DevWorker> {
  const w = await startRestartableWorker(vars, opts);
  return {
    url: w.url,
    token: w.token,
    inspectorPort: w.inspectorPort,
    get processGroup() {
      return w.processGroup;
    },
    output: w.output,
    stop: w.stop,
    kill: w.kill,
  };
}

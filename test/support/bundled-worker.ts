import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { inject } from "vitest";
import { PROJECT_ROOT, runWrangler } from "../../cli/local.ts";
import { BLANK_VARS, writeMigratedD1 } from "./wrangler-dev.ts";

/**
 * The e2e suites' Workers: the upload `wrangler deploy --dry-run` writes (the main module and
 * the lazy modules beside it, exactly what a deploy sends), run by miniflare on wrangler's own
 * workerd, in this process, with the bindings wrangler derives from wrangler.toml (its
 * `unstable_getMiniflareWorkerOptions`, which its dev server and the test plugin use, called in
 * Vitest's main process: test/e2e/global-setup.ts). One bundle serves every Worker of the run;
 * under `npm test` it is the one the checks' dry run makes or kept (test/support/checks.mjs
 * hands it over), so no Worker bundles its own. Measured against a `wrangler dev` per Worker
 * (a wrangler process, its esbuild, the [build] command and a proxy workerd each): the two e2e
 * Workers took about 12.4 s of CPU to become healthy that way, and about 2.5 s this way with
 * the bundle kept (miniflare's import and two workerds; TESTING.md, "5 Dec"). The benchmarks
 * and `npm start` keep running `wrangler dev` (test/support/wrangler-dev.ts).
 */
export interface E2eWorker {
  url: string;
  token: string;
  /** What the Worker printed (console output and workerd's own lines), for failure messages. */
  output(): string;
  stop(): Promise<void>;
  /** Stops it without waiting (for process exit, where nothing can be awaited). */
  kill(): void;
}

/** How long the checks' dry run may take to hand its bundle over. */
const BUNDLE_WAIT_MS = 120_000;

let bundle: Promise<string> | null = null;

/** The folder holding the Worker's upload (index.js and lazy/), made once per process. */
function workerBundle(): Promise<string> {
  bundle ??= (async () => {
    const handed = await fromChecks();
    if (handed) return handed;
    const out = mkdtempSync(path.join(tmpdir(), "worker-bundle-"));
    const { code, output } = await runWrangler(PROJECT_ROOT, ["deploy", "--dry-run", "--outdir", out], { ...process.env, WRANGLER_LOG: "error" });
    if (code !== 0) throw new Error(`wrangler deploy --dry-run failed (exit ${code}):\n${output}`);
    return out;
  })();
  return bundle;
}

/**
 * The dry run's output from `npm test`'s checks: they name its folder and a file they write
 * when it is done ("ok", or why not). Null when not run by them, or their dry run failed (its
 * failure is theirs to report; the Worker is then bundled here).
 */
async function fromChecks(): Promise<string | null> {
  const dir = process.env.HERMES_WORKER_BUNDLE;
  const ready = process.env.HERMES_WORKER_BUNDLE_READY;
  if (!dir || !ready) return null;
  const deadline = Date.now() + BUNDLE_WAIT_MS;
  for (;;) {
    let state = "";
    try {
      state = readFileSync(ready, "utf8").trim();
    } catch {
      // not written yet
    }
    if (state === "ok") return dir;
    if (state !== "" || Date.now() > deadline) return null;
    await sleep(50);
  }
}

/** What is used of miniflare, wrangler's own dependency (not the project's: it comes with wrangler, at wrangler's version). */
interface MiniflareModule {
  Miniflare: new (options: unknown) => { ready: Promise<URL>; dispose(): Promise<void> };
  /** The options wrangler makes (miniflare 4's shape) in the shape this miniflare takes. */
  convertV4MiniflareOptions(options: unknown): unknown;
}

/** The miniflare wrangler runs (so the options it makes are the ones that miniflare reads). */
async function wranglersMiniflare(): Promise<MiniflareModule> {
  const requireFromWrangler = createRequire(path.join(PROJECT_ROOT, "node_modules", "wrangler", "package.json"));
  return (await import(requireFromWrangler.resolve("miniflare"))) as MiniflareModule;
}

/** The workerd pids already in the run's pid file. */
const recorded = new Set<string>();

/**
 * Records the workerd processes this process started for the test run's global teardown
 * (`HERMES_E2E_PIDFILE`, test/support/run-dir.ts): miniflare does not name them, and one
 * outlives its parent when that is killed. Linux only (read from /proc); elsewhere a normal
 * stop still ends them.
 */
function recordRuntimes(): void {
  const file = process.env.HERMES_E2E_PIDFILE;
  if (!file) return;
  try {
    const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").split(" ").filter(Boolean);
    const runtimes = children.filter((pid) => {
      try {
        return !recorded.has(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("workerd");
      } catch {
        return false;
      }
    });
    if (runtimes.length === 0) return;
    appendFileSync(file, `${runtimes.join("\n")}\n`);
    for (const pid of runtimes) recorded.add(pid);
  } catch {
    // not Linux: nothing recorded
  }
}

/** Starts the bundled Worker with `vars` (over blank settings) and fresh local storage; resolves once it serves requests. */
export async function startBundledWorker(vars: Record<string, string>, token = "e2e-token"): Promise<E2eWorker> {
  const [dir, miniflare] = await Promise.all([workerBundle(), wranglersMiniflare()]);
  // Made from wrangler.toml by wrangler in Vitest's main process (test/e2e/global-setup.ts).
  const workerOptions = inject("e2eWorkerOptions");
  const persist = mkdtempSync(path.join(tmpdir(), "hermes-edge-e2e-"));
  writeMigratedD1(persist);
  const modules = readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".js"))
    .sort((a, b) => (a === "index.js" ? -1 : b === "index.js" ? 1 : a.localeCompare(b)))
    .map((f) => ({ type: "ESModule" as const, path: path.join(dir, f), contents: readFileSync(path.join(dir, f)) }));
  let output = "";
  const mf = new miniflare.Miniflare(
    miniflare.convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      // workerd's lines (the Worker's console output among them) are kept, not printed.
      handleStructuredLogs: ({ level, message }: { level: string; message: string }) => void (output += `[${level}] ${message}\n`),
      // Where `wrangler dev --persist-to <persist>` keeps D1, objects, R2 and the cache, so writeMigratedD1's database is the one opened.
      resourcePersistencePath: path.join(persist, "v3"),
      workers: [{ ...workerOptions, modules, modulesRoot: dir, bindings: { ...BLANK_VARS, API_TOKEN: token, ...vars } }],
    }),
  );
  let url: URL;
  try {
    url = await mf.ready;
  } catch (err) {
    await mf.dispose().catch(() => undefined);
    rmSync(persist, { recursive: true, force: true });
    throw new Error(`the bundled Worker did not start: ${err instanceof Error ? err.message : String(err)}\n${output}`);
  }
  recordRuntimes();
  let stopped: Promise<void> | null = null;
  const stop = () => {
    stopped ??= mf
      .dispose()
      .catch(() => undefined)
      .then(() => rmSync(persist, { recursive: true, force: true }));
    return stopped;
  };
  return {
    url: url.origin,
    token,
    output: () => output,
    stop,
    kill: () => void stop(),
  };
}

/**
 * bench/startup: what a cold isolate pays before the Worker answers anything (issue 27).
 *
 * Builds two Workers once each with `wrangler deploy --dry-run` (offline; the upload it would
 * send, with esbuild's metafile): this project's, and a minimal Hono Worker
 * (`app.get("/", (c) => c.text("ok"))`) written to a temp dir in the same run, with the same
 * compatibility date and flags. Then `wrangler check startup --workerBundle` profiles each
 * one's start-up locally in workerd, `--runs` times each (interleaved, so both see the same
 * machine), and prints the medians of the reported "Active" CPU time and their ratio
 * (goal: at most 3x). Then the bundle: its main module (evaluated at start-up) and the whole
 * upload, raw and gzip, against the issue's budgets (600 KiB gzip at start-up, the upload well
 * under the free plan's 3 MiB), and the largest parts of it by bytes in the output, per package
 * under node_modules and per folder of ours.
 * Run: npm run bench:startup [-- --runs 5 --json]
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { PROJECT_ROOT } from "../cli/local.ts";
import { main, own, percentile, ratio, within } from "./lib.ts";
// @ts-expect-error: plain JavaScript shared with test/support/checks.mjs, without types
import { STARTUP_GZIP_BUDGET, uploadModules } from "../test/support/startup-budget.mjs";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" }, json: { type: "boolean", default: false } } });
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs must be a whole number of at least 1 (got ${values.runs})`);

const KIB = 1024;
/** Issue 27's budgets: gzip of what is evaluated at start-up, and of the whole upload. */
const BUDGET_STARTUP_GZIP: number = STARTUP_GZIP_BUDGET;
const BUDGET_UPLOAD_GZIP = 3 * KIB * KIB;
const GOAL_RATIO = 3;
const WRANGLER = path.join(PROJECT_ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

/** A temp dir removed when the benchmark ends, however it ends. */
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const rm = () => rmSync(dir, { recursive: true, force: true });
  own({ stop: async () => rm(), kill: rm });
  return dir;
}

/**
 * Runs wrangler (its own process group, so workerd goes with it) within `ms`; its output, or
 * an error with the end of it.
 */
async function wrangler(args: string[], opts: { cwd: string; logDir: string; ms: number; what: string }): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [WRANGLER, ...args], {
    cwd: opts.cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_LOG_PATH: opts.logDir, FORCE_COLOR: "0", NO_COLOR: "1" },
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, sig);
    } catch {
      // already gone
    }
  };
  const forget = own({ stop: async () => signal("SIGTERM"), kill: () => signal("SIGKILL"), output: () => out });
  try {
    const code = await within(
      new Promise<number | null>((resolve, reject) => {
        child.once("error", reject);
        child.once("close", resolve);
      }),
      opts.ms,
      opts.what,
    );
    if (code !== 0) throw new Error(`${opts.what}: wrangler exited with ${code}:\n${out.trim().split("\n").slice(-20).join("\n")}`);
    return out;
  } finally {
    signal("SIGKILL");
    forget();
  }
}

/** The compatibility date and flags of wrangler.toml, for the reference Worker. */
function compatibility(): { date: string; flags: string[] } {
  const toml = readFileSync(path.join(PROJECT_ROOT, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  if (!date) throw new Error("wrangler.toml: no compatibility_date found");
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1];
  return { date, flags: [...(flags ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]!) };
}

/** Writes the minimal Hono Worker and its config; the config's path. */
function writeHonoWorker(dir: string): string {
  const { date, flags } = compatibility();
  mkdirSync(path.join(dir, "src"));
  // Resolves hono from the project's node_modules.
  symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  writeFileSync(
    path.join(dir, "src", "index.ts"),
    'import { Hono } from "hono";\n\nconst app = new Hono();\napp.get("/", (c) => c.text("ok"));\n\nexport default app;\n',
  );
  const config = path.join(dir, "wrangler.toml");
  writeFileSync(
    config,
    `name = "startup-reference"\nmain = "src/index.ts"\ncompatibility_date = "${date}"\ncompatibility_flags = [${flags.map((f) => JSON.stringify(f)).join(", ")}]\nsend_metrics = false\n`,
  );
  return config;
}

interface Built {
  bundle: string;
  outdir: string;
  metafile: string;
}

/** `wrangler deploy --dry-run`: the upload as a worker bundle (for check startup), its modules and esbuild's metafile. */
async function build(label: string, cwd: string, config: string | undefined, dir: string, logDir: string): Promise<Built> {
  const b = { bundle: path.join(dir, `${label}.bundle`), outdir: path.join(dir, `${label}-dist`), metafile: path.join(dir, `${label}-meta.json`) };
  await wrangler(["deploy", "--dry-run", ...(config ? ["--config", config] : []), "--outfile", b.bundle, "--outdir", b.outdir, "--metafile", b.metafile], {
    cwd,
    logDir,
    ms: 180_000,
    what: `building ${label} (wrangler deploy --dry-run)`,
  });
  return b;
}

interface Startup {
  active: number;
  gc: number;
  /** "Profile window": the wall time the profile covers, from the isolate's start to the end of the main module's import. */
  window: number;
  /** The profiler's median sample interval in this run (from the .cpuprofile). */
  interval: number;
}

/** One `wrangler check startup` of a prebuilt bundle: its "Active" CPU time, profile window and sample interval in ms. */
async function checkStartup(label: string, b: Built, dir: string, run: number, logDir: string): Promise<Startup> {
  const profile = path.join(dir, `${label}-${run}.cpuprofile`);
  const out = await wrangler(["check", "startup", "--workerBundle", b.bundle, "--outfile", profile], {
    cwd: PROJECT_ROOT,
    logDir,
    ms: 120_000,
    what: `wrangler check startup of ${label} (run ${run + 1})`,
  });
  const m = /Active:\s*([\d.]+)\s*ms\s*\(including\s*([\d.]+)\s*ms garbage collection\)/.exec(out);
  if (!m) throw new Error(`wrangler check startup of ${label}: no "Active: … ms" in its output:\n${out.trim().split("\n").slice(-20).join("\n")}`);
  const win = /Profile window:\s*([\d.]+)\s*ms/.exec(out);
  const deltas = (JSON.parse(readFileSync(profile, "utf8")) as { timeDeltas?: number[] }).timeDeltas ?? [];
  return { active: Number(m[1]), gc: Number(m[2]), window: win ? Number(win[1]) : NaN, interval: percentile(deltas, 50) / 1000 };
}

interface Sizes {
  main: { name: string; raw: number; gzip: number };
  upload: { modules: number; raw: number; gzip: number };
}

/** The main module and every module of the upload, lazily loaded ones included (source maps and wrangler's README left out). */
function sizes(b: Built): Sizes {
  const meta = readMeta(b);
  const files: string[] = uploadModules(b.outdir);
  const of = (f: string) => {
    const data = readFileSync(path.join(b.outdir, f));
    return { raw: data.length, gzip: gzipSync(data).length };
  };
  const all = files.map(of);
  return {
    main: { name: meta.main, ...of(meta.main) },
    upload: { modules: files.length, raw: all.reduce((a, x) => a + x.raw, 0), gzip: all.reduce((a, x) => a + x.gzip, 0) },
  };
}

interface Metafile {
  outputs: Record<string, { entryPoint?: string; inputs: Record<string, { bytesInOutput: number }> }>;
}

/** The main module's file name in the outdir and its inputs' bytes in the output. */
function readMeta(b: Built): { main: string; inputs: Record<string, number> } {
  const meta = JSON.parse(readFileSync(b.metafile, "utf8")) as Metafile;
  const entry = Object.entries(meta.outputs).find(([, o]) => o.entryPoint);
  if (!entry) throw new Error(`${b.metafile}: no output with an entry point`);
  return { main: path.basename(entry[0]), inputs: Object.fromEntries(Object.entries(entry[1].inputs).map(([k, v]) => [k, v.bytesInOutput])) };
}

/** An input's group: its package under node_modules, else its folder (two levels under workers/). */
function groupOf(input: string): string {
  const nm = input.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const parts = input.slice(nm + "node_modules/".length).split("/");
    return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (input.includes(":")) return input.slice(0, input.indexOf(":"));
  const parts = input.split("/");
  if (parts.length === 1) return parts[0]!;
  return parts[0] === "workers" && parts.length > 2 ? `${parts[0]}/${parts[1]}/` : `${parts[0]}/`;
}

/** The main module's bytes per group, largest first. */
function largest(b: Built): Array<{ group: string; bytes: number }> {
  const totals = new Map<string, number>();
  for (const [input, bytes] of Object.entries(readMeta(b).inputs)) totals.set(groupOf(input), (totals.get(groupOf(input)) ?? 0) + bytes);
  return [...totals].map(([group, bytes]) => ({ group, bytes })).sort((a, b) => b.bytes - a.bytes);
}

const kib = (n: number) => `${(n / KIB).toFixed(1)} KiB`;
const msf = (n: number) => `${n.toFixed(1)} ms`;

main("bench/startup", 30 * 60_000, async () => {
  const dir = tempDir("hermes-startup-");
  const logDir = path.join(dir, "logs");
  mkdirSync(logDir);
  const honoDir = path.join(dir, "hono");
  mkdirSync(honoDir);
  const honoConfig = writeHonoWorker(honoDir);
  const worker = await build("worker", PROJECT_ROOT, undefined, dir, logDir);
  const hono = await build("hono", honoDir, honoConfig, dir, logDir);
  const runs = { worker: [] as Startup[], hono: [] as Startup[] };
  for (let i = 0; i < RUNS; i++) {
    runs.worker.push(await checkStartup("worker", worker, dir, i, logDir));
    runs.hono.push(await checkStartup("hono", hono, dir, i, logDir));
  }
  const med = (xs: Startup[], k: keyof Startup) =>
    percentile(
      xs.map((x) => x[k]),
      50,
    );
  const [w, h] = [med(runs.worker, "active"), med(runs.hono, "active")];
  // The reference's start-up is often shorter than one sample: its "Active" is then 0, and
  // the ratio is bounded by one sample interval (measured in the worker's profiles).
  const interval = med(runs.worker, "interval");
  const bound = h > 0 ? undefined : w / interval;
  const avg = (xs: Startup[]) => xs.reduce((a, x) => a + x.active, 0) / xs.length;
  const ws = sizes(worker);
  const hs = sizes(hono);
  const parts = largest(worker);
  const { date, flags } = compatibility();
  if (values.json) {
    console.log(
      JSON.stringify(
        {
          runs: RUNS,
          compatibility: { date, flags },
          startup: {
            worker: { medianActiveMs: w, medianGcMs: med(runs.worker, "gc"), medianWindowMs: med(runs.worker, "window"), runs: runs.worker },
            hono: { medianActiveMs: h, medianGcMs: med(runs.hono, "gc"), medianWindowMs: med(runs.hono, "window"), runs: runs.hono },
            sampleIntervalMs: interval,
            ratio: h > 0 ? w / h : null,
            ratioAtLeast: bound ?? null,
            ratioToCaughtRuns: (() => {
              const caught = runs.hono.filter((x) => x.active > 0);
              return caught.length > 0 ? w / med(caught, "active") : null;
            })(),
            ratioOfMeans: avg(runs.hono) > 0 ? avg(runs.worker) / avg(runs.hono) : null,
            windowRatio: med(runs.worker, "window") / med(runs.hono, "window"),
            goalRatio: GOAL_RATIO,
          },
          bundle: { worker: ws, hono: hs, budgets: { startupGzip: BUDGET_STARTUP_GZIP, uploadGzip: BUDGET_UPLOAD_GZIP } },
          largest: parts,
        },
        null,
        2,
      ),
    );
    return;
  }
  const list = (xs: Startup[]) => xs.map((x) => x.active.toFixed(1)).join(", ");
  console.log(`bench/startup: wrangler check startup, ${RUNS} runs each (interleaved), compatibility ${date} [${flags.join(", ")}]`);
  const row = (label: string, xs: Startup[]) =>
    `${label.padEnd(14)} Active median ${msf(med(xs, "active")).padStart(9)} (gc ${msf(med(xs, "gc"))}, mean ${msf(avg(xs))}; profile window median ${msf(med(xs, "window"))})   runs: ${list(xs)}`;
  console.log(row("worker", runs.worker));
  console.log(row("minimal Hono", runs.hono));
  const goal = (r: number) => `goal ≤ ${GOAL_RATIO}x: ${r <= GOAL_RATIO ? "met" : "not met"}`;
  if (bound === undefined) console.log(`start-up Active: worker / minimal Hono ${ratio(w, h)} (${goal(w / h)})`);
  else
    console.log(
      `start-up Active: worker / minimal Hono ≥ ${bound.toFixed(1)}x (${goal(bound)}): the reference's median is 0, under one ${msf(interval)} sample of the profiler, so the ratio is bounded by that sample${avg(runs.hono) > 0 ? `; the ratio of means is ${ratio(avg(runs.worker), avg(runs.hono))}` : ""}`,
    );
  // A reference run of "Active 0.0" is one the profiler caught no sample of (its start-up is
  // a few samples long), not a free start-up: the runs it caught give the other reading.
  const caught = runs.hono.filter((x) => x.active > 0);
  if (caught.length > 0 && caught.length < runs.hono.length) {
    const hc = med(caught, "active");
    console.log(
      `  the reference's runs with samples (${caught.length} of ${runs.hono.length}): median ${msf(hc)}; worker / that ${ratio(w, hc)} (${goal(w / hc)})`,
    );
  }
  console.log(`profile window (wall time of the start-up): worker / minimal Hono ${ratio(med(runs.worker, "window"), med(runs.hono, "window"))}`);
  const verdict = (n: number, budget: number) => `${n <= budget ? "within" : "over"} the ${kib(budget)} budget`;
  console.log(
    `bundle: main module ${ws.main.name} ${kib(ws.main.raw)}, gzip ${kib(ws.main.gzip)} (evaluated at start-up: ${verdict(ws.main.gzip, BUDGET_STARTUP_GZIP)}, ${ratio(ws.main.gzip, BUDGET_STARTUP_GZIP)} of it)`,
  );
  console.log(
    `        whole upload ${ws.upload.modules} module(s) ${kib(ws.upload.raw)}, gzip ${kib(ws.upload.gzip)} (${verdict(ws.upload.gzip, BUDGET_UPLOAD_GZIP)}, ${ratio(ws.upload.gzip, BUDGET_UPLOAD_GZIP)} of it)`,
  );
  console.log(`        minimal Hono ${kib(hs.main.raw)}, gzip ${kib(hs.main.gzip)} (the worker's gzip ${ratio(ws.main.gzip, hs.main.gzip)} of it)`);
  console.log("largest parts of the main module (bytes in the output, before gzip):");
  for (const p of parts.slice(0, 15))
    console.log(`  ${p.group.padEnd(36)} ${kib(p.bytes).padStart(11)}  ${((100 * p.bytes) / ws.main.raw).toFixed(1).padStart(5)}%`);
  const rest = parts.slice(15).reduce((a, p) => a + p.bytes, 0);
  if (rest > 0) console.log(`  ${`${parts.length - 15} more`.padEnd(36)} ${kib(rest).padStart(11)}  ${((100 * rest) / ws.main.raw).toFixed(1).padStart(5)}%`);
});

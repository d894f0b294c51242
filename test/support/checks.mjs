// The checks `npm test` runs: `wrangler types --check`, `tsc -b` over the three TypeScript projects and
// `wrangler deploy --dry-run`, side by side. With `--vitest`, Vitest runs at the same time
// (every argument after it goes to `vitest run`) and the checks run at a lower CPU priority:
// they fill the moments Vitest's processes wait (on wrangler dev, on Chromium) instead of
// holding up its first test for their ~10 s. Each check's output is kept; a passing check
// prints one line after Vitest's report, a failing one its output. The exit code is
// non-zero if a check or Vitest failed. (`npm run typecheck` and `npm run build:check` still
// run the checks one by one.)
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { setPriority, tmpdir } from "node:os";
import path from "node:path";
import { startupBudgetProblems } from "./startup-budget.mjs";

const root = path.resolve(import.meta.dirname, "..", "..");
// Every Node process of the run (Vitest and its workers, wrangler, knip, the e2e CLI processes)
// keeps V8's compiled code of the modules it loads in node_modules/.cache/node-compile-cache/
// and reuses it next time (Node's module compile cache, keyed by each file's content and the
// V8 version): wrangler's 10 MB CLI, Vitest, Vite and miniflare load in about 1 s less CPU
// each (`wrangler types --check`: 2.8 → 1.9 s). A fresh clone fills it on its first run;
// deleting the folder is always safe. A caller's own NODE_COMPILE_CACHE is kept.
process.env.NODE_COMPILE_CACHE ??= path.join(root, "node_modules", ".cache", "node-compile-cache");

// Their JS entry points on this Node (npm's own, when run by `npm test`): a bare `wrangler`
// would find whichever node is first on the PATH.
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
const vitest = path.join(root, "node_modules", "vitest", "vitest.mjs");
const biome = path.join(root, "node_modules", "@biomejs", "biome", "bin", "biome");
const knip = path.join(root, "node_modules", "knip", "bin", "knip.js");

// The three TypeScript projects (the Worker, the CLI and Node tests, the console's browser
// code) are checked by one `tsc -b`: build mode parses each file once for all of them (the CLI
// project includes most of the Worker's files, and both the same lib and dependency types), so
// a fresh clone checks all three in about 6.9 s of CPU instead of 10.7 s as three processes.
// Single-threaded: tsc 7 checks on several threads by default, and side by side with Vitest on
// two cores those threads only contend (measured: half the CPU per project).
// Incremental: each project's last result is kept where its tsconfig.json says
// (node_modules/.cache/tsc/), so a run with nothing changed costs about 0.2 s, and one with a
// changed file rechecks the projects that include it. Deleting the folder is always safe.
// A check whose result follows from known files only is skipped while they are unchanged since
// it last passed: `wrangler types --check` compares worker-configuration.d.ts with what this
// wrangler makes from wrangler.toml (about 2 s of CPU to start wrangler); the dry run bundles
// the files its last metafile lists, after the [build] command made the console's assets and
// the lazy modules from their folders, with wrangler.toml, tsconfig.json and the locked
// dependencies (about 4 s of CPU: wrangler, esbuild, the two builds), and the start-up budget
// reads its output. Markers are kept in node_modules/.cache/checks/; a fresh clone runs both;
// deleting the folder is always safe.
const checksCache = path.join(root, "node_modules", ".cache", "checks");
const hashOf = (files) => {
  const hash = createHash("sha256");
  for (const f of [...new Set(files)].sort()) {
    hash.update(`${f}\0`);
    hash.update(existsSync(path.join(root, f)) ? readFileSync(path.join(root, f)) : "missing");
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 32);
};
/** Every file under a folder of the project, as paths from the root. */
const filesUnder = (dir) =>
  readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)));
const dryRunInputs = () => {
  // Throws without a previous run's metafile or output: then the dry run runs.
  const meta = JSON.parse(readFileSync(path.join(root, ".wrangler/dry-run.meta.json"), "utf8"));
  readFileSync(path.join(root, ".wrangler/dry-run/index.js"));
  return hashOf([
    ...Object.keys(meta.inputs),
    ...Object.keys(meta.outputs),
    "wrangler.toml",
    "tsconfig.json",
    "package-lock.json",
    ...filesUnder("workers/console/web"),
    ...filesUnder("workers/lazy"),
  ]);
};
const TS_PROJECTS = ["tsconfig.json", "cli/tsconfig.json", "workers/console/web/tsconfig.json"];
const CHECKS = [
  {
    name: "wrangler types --check",
    args: [wrangler, "types", "--strict-vars=false", "--env-file=/dev/null", "--check"],
    cache: { id: "wrangler-types", key: () => hashOf(["wrangler.toml", "worker-configuration.d.ts", "node_modules/wrangler/package.json"]) },
  },
  { name: "tsc -b (Worker, CLI, console)", args: [tsc, "-b", "--singleThreaded", ...TS_PROJECTS] },
  // Then the start-up budget on its output (test/support/startup-budget.mjs). Its output is
  // also the e2e suites' Worker (test/support/bundled-worker.ts), which waits for it: beside
  // Vitest it runs at the normal priority.
  {
    name: "wrangler deploy --dry-run, start-up budget",
    bundle: true,
    args: [wrangler, "deploy", "--dry-run", "--outdir", ".wrangler/dry-run", "--metafile", ".wrangler/dry-run.meta.json"],
    after: () => startupBudgetProblems(path.join(root, ".wrangler/dry-run"), path.join(root, ".wrangler/dry-run.meta.json")).problems,
    cache: { id: "dry-run", key: dryRunInputs },
  },
  // Formatting, and lint: no non-null assertions in production code, no floating promises (biome.json).
  { name: "biome ci (format, lint)", args: [biome, "ci", "--reporter=summary", "."] },
  // Unused files, exports and dependencies (knip.json). --cache keeps each file's parse in
  // node_modules/.cache/knip/ (by its path, size and time): a repeated run costs about 1.9 s of
  // CPU instead of 4.3 s; the project-wide analysis (what is used where) runs every time. Its
  // vitest and vite plugins are off (knip.json): they loaded vitest.config.ts, and with it the
  // test plugin and wrangler, about 2.2-2.5 s of CPU on a cold run; the test files are entries
  // by their paths instead (an unused export added to a Worker file still fails it).
  { name: "knip", args: [knip, "--no-progress", "--cache"] },
];

const at = process.argv.indexOf("--vitest");
const withVitest = at >= 0;
const vitestArgs = withVitest ? process.argv.slice(at + 1) : [];

// The dry run's output goes to Vitest's e2e suites: its folder, and a file written once it is
// there ("ok") or not ("failed": the e2e Worker is then bundled by the suites themselves).
const handover = withVitest ? mkdtempSync(path.join(tmpdir(), "hermes-edge-checks-")) : null;
const bundleReady = handover ? path.join(handover, "bundle-ready") : null;
function handBundleOver(built) {
  if (!bundleReady) return;
  try {
    writeFileSync(bundleReady, built ? "ok\n" : "failed\n");
  } catch {
    // the suites wait, then bundle it themselves
  }
}

/** Where a cached check's marker for its inputs as they are now goes (null: no cache for it, or an input is missing, which the check itself will say). */
function markerFor(check) {
  if (!check.cache) return null;
  try {
    return path.join(checksCache, `${check.cache.id}-${check.cache.key()}`);
  } catch {
    return null;
  }
}

/** After a pass: the marker for the inputs as they are now (the run may have rewritten some, as the dry run its metafile). */
function remember(check) {
  const marker = markerFor(check);
  if (!marker) return;
  try {
    mkdirSync(checksCache, { recursive: true });
    for (const f of readdirSync(checksCache)) if (f.startsWith(`${check.cache.id}-`)) rmSync(path.join(checksCache, f), { force: true });
    writeFileSync(marker, `${new Date().toISOString()}\n`);
  } catch {
    // not cached: it runs again next time
  }
}

function run(check) {
  const started = performance.now();
  const marker = markerFor(check);
  if (marker) {
    try {
      readFileSync(marker);
      if (check.bundle) handBundleOver(true);
      return Promise.resolve({ check, code: 0, output: "", seconds: (performance.now() - started) / 1000, cached: true });
    } catch {
      // not passed with these inputs yet
    }
  }
  return new Promise((resolve) => {
    let output = "";
    // No colours or banners in the kept output; wrangler's own level unless the caller set one.
    const child = spawn(process.execPath, check.args, { cwd: root, env: { ...process.env, FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"] });
    // Beside Vitest, the checks yield the CPU to it (nice 10; their own children inherit it),
    // except the dry run, which the e2e suites wait for.
    if (withVitest && !check.bundle && child.pid !== undefined) {
      try {
        setPriority(child.pid, 10);
      } catch {
        // not permitted here: they run at the normal priority
      }
    }
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", (err) => {
      if (check.bundle) handBundleOver(false);
      resolve({ check, code: 1, output: `${output}${err.message}\n`, seconds: (performance.now() - started) / 1000 });
    });
    child.on("close", (code, signal) => {
      // The bundle is there when wrangler succeeded, whatever the budget says of it.
      if (check.bundle) handBundleOver(code === 0);
      let problems = [];
      try {
        if (code === 0 && check.after) problems = check.after();
      } catch (err) {
        problems = [`${check.name}: ${err.message}`];
      }
      const out = problems.length > 0 ? `${output}${problems.join("\n")}\n` : output;
      const result = problems.length > 0 ? 1 : (code ?? (signal ? 1 : 0));
      if (result === 0 && check.cache) remember(check);
      resolve({ check, code: result, output: out, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/**
 * The machine's busy CPU time so far in seconds (all cores, from /proc/stat; null off Linux):
 * read at the start and the end, it is the run's CPU on an otherwise idle machine, and with
 * it how many of the cores the run kept busy. (Its own process tree's CPU cannot be read
 * whole: Vitest's workers and the killed wranglers' children are not waited for by their
 * parents, and their CPU is credited to nobody's tree.)
 */
function machineCpuSeconds() {
  try {
    const [, user, nice, system, , , irq, softirq] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).map(Number);
    // In USER_HZ, which is 100 on Linux whatever the kernel's own tick.
    const busy = (user + nice + system + irq + softirq) / 100;
    return Number.isFinite(busy) ? busy : null;
  } catch {
    return null;
  }
}

function runVitest() {
  return new Promise((resolve) => {
    const env = { ...process.env, HERMES_WORKER_BUNDLE: path.join(root, ".wrangler", "dry-run"), HERMES_WORKER_BUNDLE_READY: bundleReady };
    const child = spawn(process.execPath, [vitest, "run", ...vitestArgs], { cwd: root, stdio: "inherit", env });
    child.on("error", (err) => (console.error(`vitest did not start: ${err.message}`), resolve(1)));
    child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const started = performance.now();
const cpuAtStart = machineCpuSeconds();
// Vitest first: the checks' cache keys hash their inputs (the dry run's: about 8 MB) before they start.
const vitestDone = withVitest ? runVitest() : Promise.resolve(0);
const [results, vitestCode] = await Promise.all([Promise.all(CHECKS.map(run)), vitestDone]);
if (handover) rmSync(handover, { recursive: true, force: true });
const failed = results.filter((r) => r.code !== 0);
if (withVitest) console.log("");
for (const r of results) {
  console.log(`  ${r.code === 0 ? "✓" : "✗"} ${r.check.name} (${r.cached ? "its inputs unchanged since it passed" : `${r.seconds.toFixed(1)} s`})`);
}
for (const r of failed) {
  console.log(`\n── ${r.check.name} failed (exit ${r.code}): node ${r.check.args.map((a) => path.relative(root, a) || a).join(" ")}\n${r.output.trimEnd()}\n`);
}
const slowest = Math.max(...results.map((r) => r.seconds));
const summary = `checks: ${results.length - failed.length} of ${results.length} passed`;
const vitestSaid = vitestCode === 0 ? "passed" : `failed (exit ${vitestCode})`;
const took = ((performance.now() - started) / 1000).toFixed(1);
const cpuAtEnd = machineCpuSeconds();
// On two cores the run's CPU, not its wall time, is what the code decides; the wall time also
// follows how fast the host is at the moment (TESTING.md). Other work on the machine counts too.
const cpu = cpuAtStart === null || cpuAtEnd === null ? null : cpuAtEnd - cpuAtStart;
const cpuSaid = cpu === null ? "" : ` (the machine's CPU meanwhile ${cpu.toFixed(0)} s, ${(cpu / Number(took)).toFixed(1)} cores busy)`;
if (withVitest) console.log(`${summary} (beside Vitest, done ${slowest.toFixed(1)} s in); Vitest ${vitestSaid}; npm test took ${took} s${cpuSaid}\n`);
else console.log(`${summary} in ${took} s\n`);
process.exit(failed.length || vitestCode ? 1 : 0);

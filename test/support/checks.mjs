// The checks `npm test` runs before Vitest, side by side instead of one after another:
// `wrangler types --check`, the three `tsc --noEmit` projects and `wrangler deploy --dry-run`.
// Each one's output is kept; a passing check prints one line, a failing one its output.
// (`npm run typecheck` and `npm run build:check` still run them one by one.)
import { spawn } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..", "..");
// Their JS entry points on this Node (npm's own, when run by `npm test`): a bare `wrangler`
// would find whichever node is first on the PATH.
const wrangler = path.join(root, "node_modules", "wrangler", "bin", "wrangler.js");
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");

const CHECKS = [
  { name: "wrangler types --check", args: [wrangler, "types", "--strict-vars=false", "--env-file=/dev/null", "--check"] },
  { name: "tsc (Worker)", args: [tsc, "--noEmit", "-p", "tsconfig.json"] },
  { name: "tsc (CLI)", args: [tsc, "--noEmit", "-p", "cli/tsconfig.json"] },
  { name: "tsc (console)", args: [tsc, "--noEmit", "-p", "workers/console/web/tsconfig.json"] },
  { name: "wrangler deploy --dry-run", args: [wrangler, "deploy", "--dry-run", "--outdir", ".wrangler/dry-run"] },
];

function run(check) {
  const started = performance.now();
  return new Promise((resolve) => {
    let output = "";
    // No colours or banners in the kept output; wrangler's own level unless the caller set one.
    const child = spawn(process.execPath, check.args, { cwd: root, env: { ...process.env, FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", (err) => resolve({ check, code: 1, output: `${output}${err.message}\n`, seconds: (performance.now() - started) / 1000 }));
    child.on("close", (code, signal) => resolve({ check, code: code ?? (signal ? 1 : 0), output, seconds: (performance.now() - started) / 1000 }));
  });
}

const started = performance.now();
const results = await Promise.all(CHECKS.map(run));
const failed = results.filter((r) => r.code !== 0);
for (const r of results) {
  console.log(`  ${r.code === 0 ? "✓" : "✗"} ${r.check.name} (${r.seconds.toFixed(1)} s)`);
}
for (const r of failed) {
  console.log(`\n── ${r.check.name} failed (exit ${r.code}): node ${r.check.args.map((a) => path.relative(root, a) || a).join(" ")}\n${r.output.trimEnd()}\n`);
}
console.log(`checks: ${results.length - failed.length} of ${results.length} passed in ${((performance.now() - started) / 1000).toFixed(1)} s${failed.length ? "" : "; Vitest next"}\n`);
process.exit(failed.length ? 1 : 0);

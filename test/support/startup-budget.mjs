// The start-up budget (issue 27), checked on `wrangler deploy --dry-run`'s output by
// test/support/checks.mjs (so `npm test` fails past it) and reported by bench/startup.ts:
// the main module, which a cold isolate parses and evaluates before it answers anything, at
// most 600 KiB gzip and free of the packages loaded on first use (workers/lazy.ts); the
// whole upload well under the free plan's 3 MiB gzip, and importing no Node built-in.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

const KIB = 1024;
export const STARTUP_GZIP_BUDGET = 600 * KIB;
/** Half the free plan's 3 MiB: room for what comes next. */
export const UPLOAD_GZIP_BUDGET = 1536 * KIB;
/** Packages only the lazily loaded modules may hold (workers/lazy/*.ts), never the main module. */
export const LAZY_ONLY = ["unpdf", "gpt-tokenizer", "@modelcontextprotocol/sdk", "ajv", "@cfworker/json-schema"];

/** Every module of an upload under `outdir` (source maps and wrangler's README left out), with its path relative to it. */
export function uploadModules(outdir) {
  const walk = (dir) =>
    readdirSync(dir).flatMap((name) => {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) return walk(file);
      return name.endsWith(".map") || name === "README.md" ? [] : [path.relative(outdir, file)];
    });
  return walk(outdir);
}

/** The package an input of esbuild's metafile comes from (null: our own code). */
export function packageOf(input) {
  const at = input.lastIndexOf("node_modules/");
  if (at < 0) return null;
  const parts = input.slice(at + "node_modules/".length).split("/");
  return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0];
}

/**
 * What is wrong with the upload in `outdir` (its main module `main`, esbuild's metafile
 * `metafile` of the bundle): an empty list when it is within the budget. Also returns the sizes.
 */
export function startupBudgetProblems(outdir, metafile, main = "index.js") {
  const gzip = (file) => gzipSync(readFileSync(path.join(outdir, file))).length;
  const mainGzip = gzip(main);
  const uploadGzip = uploadModules(outdir).reduce((n, f) => n + gzip(f), 0);
  const meta = JSON.parse(readFileSync(metafile, "utf8"));
  const entry = Object.values(meta.outputs).find((o) => o.entryPoint);
  const lazyInMain = [...new Set(Object.keys(entry?.inputs ?? {}).map(packageOf))].filter((p) => p !== null && LAZY_ONLY.includes(p));
  const kib = (n) => `${(n / KIB).toFixed(1)} KiB`;
  const problems = [];
  if (!entry) problems.push(`${metafile}: no output with an entry point`);
  if (mainGzip > STARTUP_GZIP_BUDGET)
    problems.push(
      `the main module ${main} is ${kib(mainGzip)} gzip, over the start-up budget of ${kib(STARTUP_GZIP_BUDGET)}: load what a webhook does not need through workers/lazy.ts (npm run bench:startup lists the largest parts)`,
    );
  if (uploadGzip > UPLOAD_GZIP_BUDGET) problems.push(`the whole upload is ${kib(uploadGzip)} gzip, over its budget of ${kib(UPLOAD_GZIP_BUDGET)}`);
  for (const p of lazyInMain)
    problems.push(`the main module bundles ${p}, which only workers/lazy/ may (import it through workers/lazy.ts, or a type-only import)`);
  // wrangler turns a bundled package's require("node:zlib") into an import of the main module,
  // and a cold isolate then loads workerd's JavaScript of that built-in (and what it needs)
  // before anything else: with @slack/web-api bundled, os, path, querystring, util, zlib, fs
  // and stream cost more start-up CPU than the rest of the Slack client (docs/startup.md).
  const builtins = [...new Set((entry?.imports ?? []).map((i) => i.path).filter((p) => p.startsWith("node:")))];
  if (builtins.length > 0)
    problems.push(
      `the main module imports the Node built-ins ${builtins.join(", ")}, which a cold isolate loads before it answers anything: find the package that requires them (the metafile's inputs) and call its API over fetch, or load it through workers/lazy.ts`,
    );
  // An Intl object made at module load (esbuild leaves top-level declarations unindented) loads
  // ICU's data at start-up: a grapheme Intl.Segmenter made so was about 10 ms of a cold
  // isolate's 35 (docs/startup.md). Make it on first use.
  const intl = [...readFileSync(path.join(outdir, main), "utf8").matchAll(/^(?:var|let|const) (\w+) = new Intl\.(\w+)\(/gm)].map(
    (m) => `${m[1]} (Intl.${m[2]})`,
  );
  if (intl.length > 0)
    problems.push(`the main module makes ${intl.join(", ")} at start-up, which loads ICU's data before anything is answered: make it on first use`);
  return { problems, mainGzip, uploadGzip };
}

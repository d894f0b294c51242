// Bundles the modules the Worker loads on first use (workers/lazy.ts) into workers/lazy/*.js:
// wrangler uploads them beside the main module (find_additional_modules and the ESModule rule
// in wrangler.toml) and leaves `import("./lazy/….js")` to the runtime, so a cold isolate
// neither parses nor evaluates them until a PDF arrives or an MCP server is used. Run by
// wrangler's [build] before `wrangler dev` and `wrangler deploy`, and by `prepare`. Several
// wrangler dev processes may build at once (the e2e Workers): each file is written beside
// and renamed into place, and only when it changed.
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { cachedBuild, metafileInputs } from "../../cli/build-cache.mjs";

const root = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));
const outdir = path.join(root, "workers", "lazy");

/** Every workers/lazy/<name>.ts, each bundled into workers/lazy/<name>.js (what they share into chunk-<hash>.js). */
const entries = readdirSync(outdir).filter((f) => f.endsWith(".ts")).map((f) => `workers/lazy/${f}`);

/**
 * One JSON-schema validator: the MCP client's default one, ajv, compiles schemas to code
 * (which workerd forbids), and the client is always given @cfworker/json-schema's. The
 * default's import is resolved to that same validator, so ajv (about 220 KB) is not bundled.
 */
const oneValidator = {
  name: "one-json-schema-validator",
  setup(b) {
    b.onResolve({ filter: /\/validation\/ajv-provider\.js$/ }, (args) =>
      args.importer.includes("@modelcontextprotocol") ? { path: "ajv-provider", namespace: "one-validator" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "one-validator" }, () => ({
      contents: 'export { CfWorkerJsonSchemaValidator as AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";',
      resolveDir: root,
      loader: "js",
    }));
  },
};

// Skipped when workers/lazy/ already holds the build of these very sources (cli/build-cache.mjs).
await cachedBuild({ name: "lazy", script: import.meta.url, extra: entries }, async () => {
  const result = await build({
    metafile: true,
    absWorkingDir: root,
    entryPoints: entries,
    outdir,
    bundle: true,
    splitting: true,
    write: false,
    format: "esm",
    platform: "neutral",
    // What wrangler resolves for the Worker: the workerd/worker builds of packages, then the browser's.
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["node:*", "cloudflare:*"],
    target: "es2022",
    minify: true,
    chunkNames: "chunk-[hash]",
    legalComments: "eof",
    logLevel: "warning",
    plugins: [oneValidator],
  });
  const written = new Set();
  for (const file of result.outputFiles) {
    const name = path.basename(file.path);
    written.add(name);
    let old = null;
    try {
      old = readFileSync(file.path, "utf8");
    } catch {
      // first build
    }
    if (old === file.text) continue;
    const tmp = path.join(outdir, `.${name}.${process.pid}.tmp`);
    writeFileSync(tmp, file.text);
    renameSync(tmp, file.path);
  }
  // Chunks of earlier builds: their names carry their content's hash.
  for (const name of readdirSync(outdir)) if (name.startsWith("chunk-") && name.endsWith(".js") && !written.has(name)) rmSync(path.join(outdir, name), { force: true });
  return { inputs: metafileInputs(result.metafile), outputs: [...written].map((name) => path.join(outdir, name)) };
});

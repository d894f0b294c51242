// Bundles the CLI (cli/main.ts and everything it imports, libraries included) into plain
// JavaScript under dist/, so the packed `hermes-edge` runs on Node 20 and 22 with no
// dependencies installed. Run by `npm run build:cli`, and by `prepare` (npm install, npm pack).
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { cachedBuild, metafileInputs } from "./build-cache.mjs";

/**
 * workers/lazy.ts imports "./lazy/<name>.js", modules built for the Worker and uploaded beside
 * it (workers/lazy/build.mjs); the CLI bundles their sources, as chunks of its own.
 */
const lazyModulesFromSource = {
  name: "lazy-modules-from-source",
  setup(b) {
    b.onResolve({ filter: /^\.\/lazy\/[\w-]+\.js$/ }, (args) =>
      args.importer.endsWith(`${path.sep}workers${path.sep}lazy.ts`) ? { path: path.join(args.resolveDir, args.path.replace(/\.js$/, ".ts")) } : undefined,
    );
  },
};

const root = path.resolve(fileURLToPath(new URL("..", import.meta.url)));
const outdir = path.join(root, "dist");

// Skipped when dist/ already holds the build of these very sources (cli/build-cache.mjs).
await cachedBuild({ name: "cli", script: import.meta.url }, async () => {
  rmSync(outdir, { recursive: true, force: true });
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: ["cli/main.ts"],
    outdir,
    bundle: true,
    // Chunks: the gateway (node:sqlite) and the platform SDKs load only when a command needs them.
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Bundled CommonJS libraries call require() for Node built-ins; ESM has none of its own.
    banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
    chunkNames: "[name]-[hash]",
    legalComments: "eof",
    logLevel: "warning",
    plugins: [lazyModulesFromSource],
    metafile: true,
  });
  return { inputs: metafileInputs(metafile), outputs: Object.keys(metafile.outputs) };
});

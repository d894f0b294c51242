// Bundles the web console's front end (workers/console/web/main.ts and what it imports,
// markdown-it included) into workers/console/assets/app.js, which the Worker serves as a
// static file. Run by wrangler's [build] before `wrangler dev` and `wrangler deploy`, and by
// `prepare` (npm install). Several wrangler dev processes may build at once (the e2e
// Workers): the output is written to a temporary file and renamed into place, and only
// when it changed, so a reader never sees half a file.
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { cachedBuild, metafileInputs } from "../../cli/build-cache.mjs";

const root = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));
const out = path.join(root, "workers", "console", "assets", "app.js");

// Skipped when app.js already holds the build of these very sources (cli/build-cache.mjs).
await cachedBuild({ name: "console", script: import.meta.url }, async () => {
  const result = await build({
    metafile: true,
    absWorkingDir: root,
    entryPoints: ["workers/console/web/main.ts"],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "eof",
    logLevel: "warning",
  });
  const text = result.outputFiles[0].text;
  let old = null;
  try {
    old = readFileSync(out, "utf8");
  } catch {
    // first build
  }
  if (old !== text) {
    // Beside, not inside, the assets folder: wrangler dev watches that one.
    const tmp = path.join(root, "workers", "console", `.app.js.${process.pid}.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, out);
  }
  return { inputs: metafileInputs(result.metafile), outputs: [out] };
});

#!/usr/bin/env node
// hermes-edge CLI. In a checkout, on a Node that runs TypeScript itself (22.18 and later),
// the sources run as they are; otherwise (Node 20, the installed package) the JavaScript
// bundle in dist/ that `npm run build:cli` makes (npm install and npm pack build it too).
import { existsSync } from "node:fs";

const sources = new URL("./main.ts", import.meta.url);
const bundle = new URL("../dist/main.js", import.meta.url);
const runSources = Boolean(process.features.typescript) && existsSync(sources);

if (!runSources && !existsSync(bundle)) {
  process.stderr.write("hermes-edge: the CLI is not built (dist/main.js is missing); run `npm run build:cli`, or use Node 22.18 or later\n");
  process.exit(1);
}
const { createCli } = await import(runSources ? sources.href : bundle.href);
const cli = createCli(process.argv.slice(2));
const code = await cli.run();
// With stdout gone (`| head`) nothing more can be shown: leave now, not when input ends.
if (cli.stdoutClosed) process.exit(code);
process.exitCode = code;

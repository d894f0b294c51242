#!/usr/bin/env node
// hermes-edge CLI. Needs Node >= 22.18 (TypeScript is run by Node's type stripping);
// `npx hermes-edge` and npm scripts use the Node 22 pinned in devDependencies.
import { createCli } from "./main.ts";

const code = await createCli(process.argv.slice(2)).run();
process.exitCode = code;

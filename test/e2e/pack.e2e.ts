import { execFile, spawn } from "node:child_process";
import { accessSync, constants, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI_VERSION } from "../../cli/main.ts";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { harness, type Harness } from "../support/e2e.ts";
import { tempDir } from "../support/temp.ts";

/**
 * The package as a user gets it: `npm pack` once, `npm install -g` of the tarball into a
 * temporary prefix with no registry access, then the installed `hermes-edge` run by the
 * machine's own Node (20 here) and by the pinned Node 22, against the e2e Worker.
 */
const run = promisify(execFile);
let dir: string;
let bin: string;
let installed: string;
let systemNode: string;
let systemMajor: number;
let h: Harness;

/** The first `node` on PATH outside node_modules: the machine's own, not the pinned one. */
function findSystemNode(): string {
  for (const entry of (process.env.PATH ?? "").split(path.delimiter)) {
    if (entry === "" || entry.split(path.sep).includes("node_modules")) continue;
    const candidate = path.join(entry, "node");
    try {
      accessSync(candidate, constants.X_OK);
      return realpathSync(candidate);
    } catch {
      // not here
    }
  }
  throw new Error("no node on PATH outside node_modules");
}

/** Runs the installed bin with `node` first on PATH (the bin's `#!/usr/bin/env node` finds it). */
function runInstalled(node: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(bin, args, {
    env: {
      PATH: [path.dirname(node), "/usr/bin", "/bin"].join(path.delimiter),
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, "config"),
      NO_COLOR: "1",
      HERMES_EDGE_URL: h.worker.url,
      HERMES_EDGE_TOKEN: h.worker.token,
    },
    cwd: dir,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input ?? "");
  return new Promise((resolve) => child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

beforeAll(async () => {
  dir = tempDir("hermes-edge-pack-");
  const packed = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: PROJECT_ROOT });
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string }>;
  const prefix = path.join(dir, "prefix");
  await run(
    "npm",
    ["install", "--global", "--prefix", prefix, "--offline", "--cache", path.join(dir, "npm-cache"), "--no-audit", "--no-fund", path.join(dir, info!.filename)],
    { cwd: dir },
  );
  bin = path.join(prefix, "bin", "hermes-edge");
  installed = path.join(prefix, "lib", "node_modules", "hermes-edge");
  systemNode = findSystemNode();
  systemMajor = Number(/^v(\d+)/.exec((await run(systemNode, ["--version"])).stdout)![1]);
  h = await harness();
});

describe("the packed hermes-edge", () => {
  it("holds the bin and the bundle only, and depends on nothing", () => {
    const pkg = JSON.parse(readFileSync(path.join(installed, "package.json"), "utf8")) as { dependencies?: object; files: string[] };
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.files).toEqual(["cli/bin.js", "dist/"]);
    expect(() => accessSync(path.join(installed, "cli", "main.ts"))).toThrow();
    expect(() => accessSync(path.join(installed, "node_modules"))).toThrow();
  });

  it("prints its version on the machine's Node and on the pinned Node 22", async () => {
    expect(realpathSync(systemNode)).not.toBe(realpathSync(process.execPath));
    for (const node of [systemNode, process.execPath]) {
      const r = await runInstalled(node, ["--version"]);
      expect(r, node).toMatchObject({ code: 0, stdout: `${CLI_VERSION}\n`, stderr: "" });
    }
  });

  it("chats through a pipe with a local Worker on the machine's Node", async () => {
    const r = await runInstalled(systemNode, ["chat"], "hello from the package\n");
    expect(r.stderr).toContain("new session");
    expect(r).toMatchObject({ code: 0, stdout: "echo: hello from the package\n" });
  });

  it("on a Node without node:sqlite, gateway is one line and exit code 1", async (ctx) => {
    if (systemMajor >= 22) ctx.skip();
    const r = await runInstalled(systemNode, ["gateway"]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("needs Node 22.13 or later");
  });
});

import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/local.ts";
import { CLI_VERSION } from "../../cli/main.ts";
import { VERSION } from "../../workers/version.ts";

const read = (file: string) => readFileSync(path.join(PROJECT_ROOT, file), "utf8");
const pkg = JSON.parse(read("package.json")) as Record<string, unknown> & { version: string; scripts: Record<string, string> };
const lock = JSON.parse(read("package-lock.json")) as { packages: Record<string, Record<string, unknown>> };

describe("package.json and the lockfile", () => {
  it("the lockfile's root entry matches package.json, so a fresh npm install does not rewrite it", () => {
    const root = lock.packages[""]!;
    for (const key of ["name", "version", "bin", "dependencies", "devDependencies", "engines"]) expect(root[key], key).toEqual(pkg[key]);
    expect((pkg.devDependencies as Record<string, string>).vite).toBe("8.3.8");
  });

  it("the package carries no runtime dependencies, only the bin and the bundle; the CLI's version is the package's", () => {
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.files).toEqual(["cli/bin.js", "dist/"]);
    expect(CLI_VERSION).toBe(pkg.version);
    expect(VERSION, "workers/version.ts, the one version (the Worker's, the CLI's, the MCP client's)").toBe(pkg.version);
  });

  it("deploy applies the remote migrations first and stops if they fail; cf-typegen is wrangler types", () => {
    expect(pkg.scripts.deploy).toBe("wrangler d1 migrations apply DB --remote && wrangler deploy");
    expect(pkg.scripts["cf-typegen"]).toMatch(/^wrangler types\b/);
    expect(pkg.scripts.types).toBe("npm run cf-typegen");
  });
});

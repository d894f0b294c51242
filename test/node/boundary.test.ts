import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../cli/local.ts";

/** Platform SDKs stay inside their adapter folder; the core never imports an adapter. */
const SDKS: Record<string, string> = { grammy: "telegram", "discord-interactions": "discord", "@slack/web-api": "slack" };

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === "node_modules" ? [] : sources(p);
    return /\.(ts|js)$/.test(name) ? [p] : [];
  });
}

const importsOf = (file: string) => [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);

describe("module boundaries", () => {
  const files = ["workers", "durable-objects", "cli"].flatMap((d) => sources(path.join(PROJECT_ROOT, d)));

  it("imports each platform SDK only inside workers/platforms/<its platform>/", () => {
    const leaks: string[] = [];
    for (const file of files) {
      const rel = path.relative(PROJECT_ROOT, file);
      for (const spec of importsOf(file)) {
        const sdk = Object.keys(SDKS).find((s) => spec === s || spec.startsWith(`${s}/`));
        if (sdk && !rel.startsWith(`workers/platforms/${SDKS[sdk]}/`)) leaks.push(`${rel} imports ${spec}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it("keeps the agent core free of runtime, SDK and adapter imports", () => {
    const core = files.filter((f) => path.relative(PROJECT_ROOT, f).startsWith("workers/agent/") && !path.relative(PROJECT_ROOT, f).startsWith("workers/agent/mcp/"));
    expect(core.length).toBeGreaterThan(0);
    // Pure libraries the core may use: no runtime APIs, no network.
    const pure = (s: string) => (s.startsWith("./") && !s.startsWith("./mcp/")) || s.startsWith("gpt-tokenizer/");
    const bad = core.flatMap((f) => importsOf(f).filter((s) => !pure(s)).map((s) => `${path.relative(PROJECT_ROOT, f)} imports ${s}`));
    expect(bad).toEqual([]);
  });

  it("keeps the format module pure: its own files and markdown-it only, so it runs in workerd and Node", () => {
    const format = files.filter((f) => path.relative(PROJECT_ROOT, f).startsWith("workers/format/"));
    expect(format.length).toBeGreaterThan(0);
    const bad = format.flatMap((f) => importsOf(f).filter((s) => !s.startsWith("./") && s !== "markdown-it").map((s) => `${path.relative(PROJECT_ROOT, f)} imports ${s}`));
    expect(bad).toEqual([]);
  });

  it("imports the MCP SDK only in workers/agent/mcp/ (never its stdio client) and in the gateway's mcp.ts", () => {
    const bad: string[] = [];
    for (const file of files) {
      const rel = path.relative(PROJECT_ROOT, file);
      for (const spec of importsOf(file)) {
        const sdk = spec.startsWith("@modelcontextprotocol/sdk");
        if (rel.startsWith("workers/agent/mcp/")) {
          if (spec.includes("/client/stdio") || !(sdk || spec.startsWith("./") || /^\.\.\/[\w-]+\.ts$/.test(spec))) bad.push(`${rel} imports ${spec}`);
        } else if (sdk && rel !== "cli/gateway/mcp.ts") bad.push(`${rel} imports ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

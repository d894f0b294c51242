import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readGatewayConfig } from "../../cli/gateway/config.ts";
import { gatewayMcpSource } from "../../cli/gateway/mcp.ts";
import type { McpToolSource } from "../../workers/agent/mcp/index.ts";
import type { ToolListing } from "../../workers/agent/index.ts";
import { startLoopbackMcp } from "../support/mcp-http.ts";
import { tempDir } from "../support/temp.ts";

const RELAY = { GATEWAY_RELAY_URL: "https://edge.example.com", GATEWAY_RELAY_ID: "gw", GATEWAY_RELAY_SECRET: "s" };
const SERVER_SCRIPT = path.join(import.meta.dirname, "../support/mcp-stdio-server.ts");
const local = (name: string, env: Record<string, string> = {}) => ({ name, command: process.execPath, args: [SERVER_SCRIPT], env });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function mcpFile(list: unknown): { cwd: string; file: string } {
  const cwd = tempDir("he-gw-mcp-");
  writeFileSync(path.join(cwd, "mcp.json"), typeof list === "string" ? list : JSON.stringify(list));
  return { cwd, file: "mcp.json" };
}

function run(listing: ToolListing, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const t = listing.tools.find((x) => x.schema.function.name === name);
  if (!t) throw new Error(`no tool ${name}`);
  return t.run(args, { fetch });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("gateway --mcp", () => {
  it("reads the file into the config, and refuses a missing or invalid one with every problem named", () => {
    const ok = mcpFile([local("files"), { name: "docs", url: "https://docs.example/mcp" }]);
    const r = readGatewayConfig(RELAY, { mcp: ok.file }, ok.cwd);
    expect(r).toMatchObject({
      ok: true,
      config: {
        mcpServers: [
          { name: "files", command: process.execPath, args: [SERVER_SCRIPT] },
          { name: "docs", url: "https://docs.example/mcp" },
        ],
      },
    });
    expect(readGatewayConfig(RELAY, { mcp: "nope.json" }, ok.cwd)).toEqual({
      ok: false,
      error: `--mcp: cannot read ${path.join(ok.cwd, "nope.json")} (no such file)`,
    });
    const bad = mcpFile([
      { name: "x y", command: "a" },
      { name: "p", command: "node", args: "server.js" },
    ]);
    const refused = readGatewayConfig(RELAY, { mcp: bad.file }, bad.cwd);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error.split("\n").slice(1)).toEqual([
      '  mcp.json entry 1: name must be 1-32 letters, digits, - or _ (no "__"), got "x y"',
      "  server p: args must be a list of strings",
    ]);
    expect(readGatewayConfig({ ...RELAY, LLM_PROVIDER: "workers-ai" }, {}, ok.cwd)).toMatchObject({
      ok: false,
      error: expect.stringContaining("runs only in the Worker"),
    });
  });

  it("runs a local server as a child process: its tools work, its stderr stays quiet, close stops it", async () => {
    const logged: string[] = [];
    const docs = await startLoopbackMcp();
    cleanups.push(() => docs.close());
    const src: McpToolSource = gatewayMcpSource([local("files", { API_KEY: "sk-local-9f8e7d" }), { name: "docs", url: docs.url }], {
      env: { MCP_TOKEN_DOCS: "remote-tok-1234" },
      log: (l) => void logged.push(l),
    });
    cleanups.push(() => src.close());
    const listing = await src.list();
    expect(listing.notes).toEqual([]);
    expect(listing.tools.filter((t) => t.server === "files").map((t) => t.schema.function.name)).toEqual(["files__echo", "files__pid", "files__secret"]);
    expect(await run(listing, "files__echo", { text: "over stdio" })).toBe("over stdio");
    expect(await run(listing, "files__secret")).toBe("key is [redacted]");
    expect(await run(listing, "docs__whoami")).toBe("you sent Bearer [redacted]");
    const pid = Number(await run(listing, "files__pid"));
    expect(alive(pid)).toBe(true);
    await src.close();
    expect(alive(pid)).toBe(false);
    expect(logged).toEqual([]);
  });

  it("a local server that fails to start leaves a note, and its stderr goes to the log", async () => {
    const logged: string[] = [];
    const src = gatewayMcpSource([{ name: "broken", command: process.execPath, args: ["-e", "console.error('fatal: no config'); process.exit(3)"], env: {} }], {
      env: {},
      log: (l) => void logged.push(l),
    });
    cleanups.push(() => src.close());
    const { tools, notes } = await src.list();
    expect(tools).toEqual([]);
    expect(notes).toEqual(["tools of server broken are unavailable: the connection to the server closed"]);
    expect(logged.join("\n")).toContain("stderr of broken:\nfatal: no config");
  });
});

import { describe, expect, it } from "vitest";
import { edgeMcpSource } from "../../workers/agent/mcp/index.ts";
import { ServerLog, webMcpHandler } from "../support/mcp-server.ts";
import { net } from "./setup.ts";

const TOKEN = "edge-tok-8d2e4f";

function setup() {
  const log = new ServerLog();
  net.route("https://mcp.test", webMcpHandler({ log }));
  net.route("https://down.test", () => new Response("maintenance", { status: 502 }));
  const logged: string[] = [];
  const env = {
    MCP_SERVERS: JSON.stringify([
      { name: "docs", url: "https://mcp.test/mcp" },
      { name: "down", url: "https://down.test/mcp" },
    ]),
    MCP_TOKEN_DOCS: TOKEN,
  };
  const src = edgeMcpSource(env, { log: (l) => void logged.push(l) })!;
  return { log, src, logged };
}

describe("MCP at the edge (workerd, the SDK on both ends)", () => {
  it("lists and calls a server's tools over the fetch router, with its token; a server that is down is a note", async () => {
    const { log, src, logged } = setup();
    const listing = await src.list();
    expect(listing.tools.map((t) => t.schema.function.name)).toContain("docs__echo");
    expect(listing.notes).toEqual(["tools of server down are unavailable: the server failed (HTTP 502)"]);
    const echo = listing.tools.find((t) => t.schema.function.name === "docs__echo")!;
    expect(await echo.run({ text: "from workerd" }, { fetch })).toBe("from workerd");
    expect(log.authorizations.length).toBeGreaterThan(0);
    expect(log.authorizations.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
    expect(logged.join("\n")).not.toContain(TOKEN);
    await src.close();
  });

  it("an abort reaches the server: its request is aborted and the tool is cancelled", async () => {
    const { log, src } = setup();
    const slow = (await src.list()).tools.find((t) => t.schema.function.name === "docs__slow")!;
    const ctrl = new AbortController();
    const running = slow.run({}, { fetch, signal: ctrl.signal });
    await log.next("call:slow");
    ctrl.abort(new Error("interrupted"));
    await expect(running).rejects.toThrow("interrupted");
    await log.next("http-closed");
    await log.next("aborted:slow");
    await src.close();
  });
});
